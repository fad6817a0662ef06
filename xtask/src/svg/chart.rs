//! The book's charts, drawn with plotters' SVG backend from the recorded results. Every
//! registered step that has results appears, tensor-core steps against cuBLAS in their own
//! precision. Output is deterministic (integer coordinates, no system fonts), so
//! `cargo xtask book --check` can compare it byte for byte.

use crate::results::{HEADLINE, Results, number};
use common::Precision;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Canvas and fonts: 680 units wide. Plotters writes a font of size s as s / 1.24 units, so FONT
/// is 19.4 units: on a 400-pixel phone screen, where a figure takes the screen's width
/// (book/theme/custom.css, a scale of about 0.58), every text of a chart is 11 pixels or more.
pub(super) const WIDTH: u32 = 680;
pub(super) const FONT: u32 = 24;
pub(super) const TITLE: u32 = 28;
/// One colour per step of the ladder (Tableau 10), by step number: the precisions of a step share
/// its colour, and a precision has its own marker ([`marker`]) in every chart.
const PALETTE: [RGBColor; 15] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0x79, 0x70, 0x6e),
    RGBColor(0x1b, 0x9e, 0x77),
    RGBColor(0x66, 0x3d, 0x99),
    RGBColor(0xb8, 0x54, 0x0b),
    RGBColor(0x00, 0x6d, 0x8f),
    RGBColor(0xc2, 0x3b, 0x8f),
];
/// cuBLAS and the roofs.
pub(super) const REFERENCE: RGBColor = RGBColor(0x22, 0x22, 0x22);
/// The order of precisions in legends and panels.
const ORDER: [Precision; 12] = [
    Precision::F32,
    Precision::Tf32x3,
    Precision::F16,
    Precision::F16C16,
    Precision::Bf16,
    Precision::Bf16C16,
    Precision::Tf32,
    Precision::F64,
    Precision::Fp8,
    Precision::Fp8C32,
    Precision::Fp8Block,
    Precision::Fp8BlockC32,
];

/// A registered step with results: its id, short label, precision and colour.
pub(super) struct Series {
    pub(super) id: String,
    label: String,
    step: String,
    pub(super) precision: Precision,
    pub(super) colour: RGBColor,
}

/// A precision as the book writes it: FP16, 3xTF32.
pub(super) fn name(p: Precision) -> String {
    match p {
        Precision::Tf32x3 => "3xTF32".into(),
        Precision::F16C16 | Precision::Bf16C16 => format!("{} (16-bit C)", name(p.arithmetic())),
        Precision::Fp8 => "FP8".into(),
        Precision::Fp8Block => "FP8 block-scaled".into(),
        Precision::Fp8C32 | Precision::Fp8BlockC32 => format!("{} (FP32 C)", name(p.arithmetic())),
        p => p.label().to_uppercase(),
    }
}

/// The precision of the cuBLAS call a step is measured against: 3xTF32 is an SGEMM.
pub(super) fn reference(p: Precision) -> Precision {
    if p == Precision::Tf32x3 { Precision::F32 } else { p }
}

pub(super) fn series(r: &Results) -> Vec<Series> {
    steps::ALL
        .iter()
        .filter(|s| r.runs().any(|x| x.step == s.id().as_str()))
        .map(|s| {
            let n = number(s.name);
            Series {
                id: s.id(),
                label: match s.precision {
                    Precision::F32 => n.to_string(),
                    p => format!("{n} {}", name(p)),
                },
                step: n.to_string(),
                precision: s.precision,
                colour: PALETTE[(n.parse::<usize>().unwrap_or(1) + PALETTE.len() - 1) % PALETTE.len()],
            }
        })
        .collect()
}

/// The steps of `all`, once each, with their colours.
fn step_colours(all: &[Series]) -> Vec<(String, RGBColor)> {
    let mut out: Vec<(String, RGBColor)> = Vec::new();
    for s in all {
        if !out.iter().any(|(n, _)| *n == s.step) {
            out.push((s.step.clone(), s.colour));
        }
    }
    out
}

/// The precisions of `all`, in [`ORDER`].
pub(super) fn precisions(all: &[Series]) -> Vec<Precision> {
    ORDER.into_iter().filter(|p| all.iter().any(|s| s.precision == *p)).collect()
}

/// cuBLAS in precision `p` at `shape`: the best of the runs measured beside the steps whose
/// reference it is (every run of a step times cuBLAS again, in the same sweep).
pub(super) fn cublas(r: &Results, all: &[Series], p: Precision, shape: (u64, u64, u64)) -> Option<f64> {
    all.iter()
        .filter(|s| reference(s.precision) == p)
        .filter_map(|s| r.run(&s.id, shape).map(|x| x.cublas_gflops))
        .filter(|g| g.is_finite())
        .fold(None, |best: Option<f64>, g| Some(best.map_or(g, |b| b.max(g))))
}

pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Renders `draw` onto a white canvas of `WIDTH` x `height` and returns the SVG text.
pub(super) fn render(height: u32, draw: impl FnOnce(&Area) -> Result<(), String>) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        let done = root.fill(&WHITE).map_err(|e| e.to_string()).and_then(|()| draw(&root));
        // A chart that fails to draw shows why instead of failing the whole book.
        if let Err(e) = done {
            let _ = root.draw(&Text::new(e, (10, 30), ("sans-serif", FONT).into_font()));
        }
        let _ = root.present();
    }
    out.push('\n');
    out
}

pub(super) fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

pub(super) fn font(size: u32) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&REFERENCE)
}

/// About how many units `chars` characters of [`font`]`(FONT)` take, 0.4 of the font size each
/// (the roofline places its labels by a more cautious 0.45, so that no roof crosses them).
pub(super) fn text_width(chars: u32) -> u32 {
    chars * FONT * 40 / 100
}

/// The marker of precision `p` centred on pixel (x, y) of `area`: FP32 ●, 3xTF32 ✚, FP16 ■,
/// BF16 ◆, TF32 ▲, FP64 ▼; a 16-bit C draws its precision's marker hollow.
pub(super) fn marker(area: &Area, (x, y): (i32, i32), p: Precision, colour: RGBColor) -> Result<(), String> {
    let hollow = p.output_unit_roundoff() > 0.0;
    let style = if hollow { colour.stroke_width(2) } else { colour.filled() };
    // A polygon is always filled: a hollow one is its closed outline.
    let poly = |pts: &[(i32, i32)]| {
        let mut corners: Vec<(i32, i32)> = pts.iter().map(|&(dx, dy)| (x + dx, y + dy)).collect();
        if hollow {
            corners.push(corners[0]);
            area.draw(&PathElement::new(corners, style))
        } else {
            area.draw(&Polygon::new(corners, style))
        }
    };
    match p {
        Precision::F32 => area.draw(&Circle::new((x, y), 7, style)),
        Precision::F16 | Precision::F16C16 => area.draw(&Rectangle::new([(x - 6, y - 6), (x + 6, y + 6)], style)),
        Precision::Bf16 | Precision::Bf16C16 => poly(&[(0, -9), (8, 0), (0, 9), (-8, 0)]),
        Precision::Tf32 => poly(&[(0, -9), (8, 6), (-8, 6)]),
        Precision::F64 => poly(&[(0, 9), (8, -6), (-8, -6)]),
        // A pentagon, and a hexagon for the fine-grained scales.
        Precision::Fp8 | Precision::Fp8C32 => poly(&[(0, -9), (9, -2), (5, 8), (-5, 8), (-9, -2)]),
        Precision::Fp8Block | Precision::Fp8BlockC32 => poly(&[(-4, -8), (4, -8), (9, 0), (4, 8), (-4, 8), (-9, 0)]),
        Precision::Tf32x3 => poly(&[
            (-3, -8),
            (3, -8),
            (3, -3),
            (8, -3),
            (8, 3),
            (3, 3),
            (3, 8),
            (-3, 8),
            (-3, 3),
            (-8, 3),
            (-8, -3),
            (-3, -3),
        ]),
    }
    .map_err(err)
}

/// A chart's title, centred at the top of `root`.
fn title(root: &Area, text: &str) -> Result<(), String> {
    root.draw(&Text::new(text, (WIDTH as i32 / 2, 12), font(TITLE).pos(Pos::new(HPos::Center, VPos::Top)))).map_err(err)
}

/// A legend entry: its label, colour and mark.
pub(super) type Entry = (String, RGBColor, Mark);
/// A legend: groups of entries, each in its number of columns.
pub(super) type Key = Vec<(Vec<Entry>, usize)>;

/// How a legend entry is marked.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Mark {
    Line,
    Dashed,
    Shape(Precision),
}

/// One row group of a legend, drawn in `columns` from pixel row `y` of `area`; returns the
/// row below it.
fn legend(area: &Area, y: i32, entries: &[Entry], columns: usize) -> Result<i32, String> {
    let col_w = (WIDTH as i32 - 20) / columns as i32;
    for (i, (label, colour, mark)) in entries.iter().enumerate() {
        let (x, y) = (20 + col_w * (i % columns) as i32, y + 30 * (i / columns) as i32);
        let style = colour.stroke_width(4);
        match mark {
            Mark::Dashed => {
                area.draw(&PathElement::new(vec![(x, y), (x + 12, y)], style)).map_err(err)?;
                area.draw(&PathElement::new(vec![(x + 20, y), (x + 32, y)], style)).map_err(err)?;
            }
            Mark::Line => area.draw(&PathElement::new(vec![(x, y), (x + 32, y)], style)).map_err(err)?,
            Mark::Shape(p) => marker(area, (x + 16, y), *p, *colour)?,
        }
        area.draw(&Text::new(label.clone(), (x + 40, y - 10), font(FONT))).map_err(err)?;
    }
    Ok(y + 30 * entries.len().div_ceil(columns) as i32)
}

/// The legend rows for the steps' colours (5 columns), then the precisions' markers in grey (2
/// columns), then `more` (black: cuBLAS and the roofs); and their height.
pub(super) fn key(all: &[Series], more: Vec<Entry>) -> (Key, u32) {
    let steps: Vec<_> = step_colours(all).into_iter().map(|(n, c)| (format!("step {n}"), c, Mark::Line)).collect();
    let grey = RGBColor(0x80, 0x80, 0x80);
    let shapes: Vec<_> = precisions(all).into_iter().map(|p| (name(p), grey, Mark::Shape(p))).collect();
    // Two columns of precisions: "FP8 block-scaled (FP32 C)" does not fit a third of the width.
    let groups = vec![(steps, 5), (shapes, 2), (more, 2)];
    let rows: usize = groups.iter().map(|(e, c)| e.len().div_ceil(*c)).sum();
    (groups, 30 * rows as u32 + 20)
}

pub(super) fn draw_key(area: &Area, groups: &Key) -> Result<(), String> {
    let mut y = 16;
    for (entries, columns) in groups {
        y = legend(area, y, entries, *columns)?;
    }
    Ok(())
}

/// GFLOP/s of every step at 4096³, one horizontal bar each on a log axis, with a black mark
/// at cuBLAS in the step's own precision.
pub fn gflops(r: &Results) -> String {
    let rows: Vec<(Series, f64, f64)> = series(r)
        .into_iter()
        .filter_map(|s| {
            let x = r.run(&s.id, HEADLINE)?;
            Some((x.gflops, x.cublas_gflops, s))
        })
        .map(|(g, c, s)| (s, g, c))
        .collect();
    let n = rows.len();
    // Room for the longest row label ("14 FP8 block-scaled (FP32 C)"), and an axis that ends a
    // half above the fastest bar or cuBLAS mark (FP8 passes 1M GFLOP/s).
    let longest = rows.iter().map(|r| r.0.label.chars().count()).max().unwrap_or(0) as u32;
    let high = rows.iter().flat_map(|r| [r.1, r.2]).fold(1e6 / 1.5, f64::max) * 1.5;
    render(130 + 44 * n as u32, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(format!("GFLOP/s per step at {}³ (log)", HEADLINE.0), font(TITLE))
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size((text_width(longest) + 16).max(130))
            .build_cartesian_2d((100f64..high).log_scale(), -0.5f64..n as f64 - 0.5)
            .map_err(err)?;
        let label = |y: &f64| {
            let i = n as f64 - 1.0 - y.round();
            rows.get(i as usize).filter(|_| (y - y.round()).abs() < 1e-6).map(|r| r.0.label.clone()).unwrap_or_default()
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(RGBColor(0xf0, 0xf0, 0xf0))
            .y_labels(n)
            .y_label_formatter(&label)
            .x_label_formatter(&|v| short(*v))
            .x_desc("GFLOP/s; black: cuBLAS, same precision")
            .label_style(font(FONT))
            .axis_desc_style(font(FONT))
            .draw()
            .map_err(err)?;
        for (i, (s, g, cublas)) in rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            chart.draw_series([Rectangle::new([(100.0, y - 0.32), (*g, y + 0.32)], s.colour.filled())]).map_err(err)?;
            let value = Text::new(format!("{g:.0}"), (120.0, y + 0.14), font(FONT));
            chart.draw_series([value]).map_err(err)?;
            chart
                .draw_series([PathElement::new(
                    vec![(*cublas, y - 0.45), (*cublas, y + 0.45)],
                    REFERENCE.stroke_width(4),
                )])
                .map_err(err)?;
        }
        Ok(())
    })
}

/// GFLOP/s against N for N x N x N (log-log), in small multiples: the FP32 results (steps 1-6,
/// and 3xTF32, an SGEMM on tensor cores) against cuBLAS SGEMM, then each tensor-core precision
/// against cuBLAS in it (dashed).
pub fn scaling(r: &Results) -> String {
    let squares: Vec<u64> = r.shapes().into_iter().filter(|&(m, n, k)| m == n && n == k).map(|s| s.0).collect();
    let all = series(r);
    let mut panels: Vec<Precision> = Vec::new();
    for p in ORDER.map(reference) {
        if !panels.contains(&p) && all.iter().any(|s| reference(s.precision) == p) {
            panels.push(p);
        }
    }
    let (groups, legend_h) = key(&all, vec![("cuBLAS, same precision".into(), REFERENCE, Mark::Dashed)]);
    // Every panel's y axis ends at the same height, a half above the fastest run or cuBLAS of any.
    let high = all
        .iter()
        .flat_map(|s| squares.iter().filter_map(|&n| r.run(&s.id, (n, n, n))))
        .flat_map(|x| [x.gflops, x.cublas_gflops])
        .fold(1e6, f64::max)
        * 1.5;
    let (title_h, big_h, small_w, small_h) = (44u32, 430u32, WIDTH / 2, 330u32);
    let small_rows = panels.len().saturating_sub(1).div_ceil(2) as u32;
    let plots_h = title_h + big_h + small_h * small_rows;
    render(plots_h + legend_h, |root| {
        title(root, "GFLOP/s against size, N x N x N")?;
        // x is log2 N on a linear axis, so that every power of two of the sweep gets a tick.
        let (lo, hi) = (
            (squares.iter().copied().min().unwrap_or(1) as f64).log2() - 0.3,
            (squares.iter().copied().max().unwrap_or(2) as f64).log2() + 0.3,
        );
        for (i, &p) in panels.iter().enumerate() {
            let (area, big) = if i == 0 {
                (root.clone().shrink((0, title_h), (WIDTH, big_h)), true)
            } else {
                let (row, col) = ((i - 1) / 2, (i - 1) % 2);
                let at = (small_w * col as u32, title_h + big_h + small_h * row as u32);
                (root.clone().shrink(at, (small_w, small_h)), false)
            };
            let members: Vec<&Series> = all.iter().filter(|s| reference(s.precision) == p).collect();
            // The panel's y axis starts at the power of ten below its lowest point.
            let floor = |members: &[&Series]| {
                let low = members
                    .iter()
                    .flat_map(|s| squares.iter().filter_map(|&n| r.run(&s.id, (n, n, n)).map(|x| x.gflops)))
                    .fold(1e6, f64::min);
                10f64.powf(low.log10().floor()).clamp(1.0, 1e5)
            };
            let caption = if p == Precision::F32 {
                let mut kinds = vec!["FP32 (SIMT)".to_string()];
                kinds.extend(precisions(&all).into_iter().filter(|q| *q != p && reference(*q) == p).map(name));
                let kinds: Vec<&str> = kinds.iter().map(String::as_str).collect();
                format!("{} vs cuBLAS SGEMM", crate::results::and_list(&kinds))
            } else {
                // Half the width: the precision alone ("vs cuBLAS" is the legend's dashed line).
                name(p)
            };
            let mut chart = ChartBuilder::on(&area)
                .caption(caption, font(FONT))
                .margin(10)
                .margin_right(if big { 14 } else { 18 })
                .x_label_area_size(if big { 56 } else { 36 })
                .y_label_area_size(if big { 80 } else { 64 })
                .build_cartesian_2d(lo..hi, (floor(&members)..high).log_scale())
                .map_err(err)?;
            // Small panels label every other power of two, so that the labels do not touch.
            let x_label = |v: &f64| {
                let whole = v.fract().abs() < 1e-6;
                if whole && (big || (v.round() as i64) % 2 == 1) { short(2f64.powf(*v)) } else { String::new() }
            };
            let mut mesh = chart.configure_mesh();
            mesh.light_line_style(RGBColor(0xf0, 0xf0, 0xf0))
                .x_labels((hi - lo) as usize + 1)
                .x_label_formatter(&x_label)
                .y_label_formatter(&|v| short(*v))
                .label_style(font(FONT))
                .axis_desc_style(font(FONT));
            if big {
                mesh.x_desc("N (log scale)").y_desc("GFLOP/s");
            }
            mesh.draw().map_err(err)?;
            let points = |id: &str| -> Vec<(f64, f64)> {
                squares.iter().filter_map(|&n| r.run(id, (n, n, n)).map(|x| ((n as f64).log2(), x.gflops))).collect()
            };
            for s in &members {
                let pts = points(&s.id);
                chart.draw_series(LineSeries::new(pts.clone(), s.colour.stroke_width(3))).map_err(err)?;
                for pt in pts {
                    marker(root, chart.backend_coord(&pt), s.precision, s.colour)?;
                }
            }
            let best: Vec<(f64, f64)> =
                squares.iter().filter_map(|&n| cublas(r, &all, p, (n, n, n)).map(|g| ((n as f64).log2(), g))).collect();
            chart.draw_series(DashedLineSeries::new(best, 10, 6, REFERENCE.stroke_width(2))).map_err(err)?;
        }
        let below = root.clone().shrink((0, plots_h), (WIDTH, legend_h));
        draw_key(&below, &groups)
    })
}

/// The decode shapes' chart: for each layer's (N, K), the time of the top rung that records them
/// (step 15) and of the fastest cuBLAS configuration timed beside it, against M = 1 to 256 on a
/// log axis, in FP16 and BF16 with a 16-bit C (the layout of inference). Empty where no step
/// has recorded the decode shapes.
pub fn decode(r: &Results) -> String {
    let layers = [(11008u64, 4096u64), (4096, 11008), (4096, 4096)];
    let ms = [1u64, 8, 16, 32, 64, 128, 256];
    let all = series(r);
    let top: Vec<&Series> = all
        .iter()
        .filter(|s| matches!(s.precision, Precision::F16C16 | Precision::Bf16C16))
        .filter(|s| layers.iter().all(|&(n, k)| ms.iter().all(|&m| r.run(&s.id, (m, n, k)).is_some())))
        .collect();
    let Some(step) = top.last().map(|s| s.step.clone()) else { return String::new() };
    let top: Vec<&Series> = top.into_iter().filter(|s| s.step == step).collect();
    let mut entries: Vec<Entry> = top
        .iter()
        .map(|s| (format!("step {step}, {}", name(s.precision)), s.colour, Mark::Shape(s.precision)))
        .collect();
    // cuBLAS's line of each precision carries that precision's marker in black, so that the two
    // dashed lines can be told apart where cuBLAS's FP16 and BF16 kernels differ.
    // (Every line here has a 16-bit C, which the rung's entries say.)
    let cublas = |p: Precision| format!("fastest cuBLAS, {}, dashed", name(p.arithmetic()));
    entries.extend(top.iter().map(|s| (cublas(s.precision), REFERENCE, Mark::Shape(s.precision))));
    let groups: Key = vec![(entries, 2)];
    let legend_h = 30 * 2 + 20;
    let (title_h, panel_h) = (44u32, 300u32);
    let plots_h = title_h + panel_h * layers.len() as u32;
    render(plots_h + legend_h, |root| {
        title(root, "Decode: time against M, M x N x K")?;
        for (i, &(n, k)) in layers.iter().enumerate() {
            let area = root.clone().shrink((0, title_h + panel_h * i as u32), (WIDTH, panel_h));
            let us = |x: &crate::results::Run| 1e3 * x.time_ms;
            let cublas_us = |x: &crate::results::Run| x.fastest_cublas_gflops.map(|g| 1e3 * x.time_ms * x.gflops / g);
            let high = top
                .iter()
                .flat_map(|s| ms.iter().filter_map(move |&m| r.run(&s.id, (m, n, k))))
                .flat_map(|x| [Some(us(x)), cublas_us(x)].into_iter().flatten())
                .fold(0.0, f64::max);
            let mut chart = ChartBuilder::on(&area)
                .caption(format!("N = {n}, K = {k}"), font(FONT))
                .margin(10)
                .margin_right(18)
                .x_label_area_size(if i + 1 == layers.len() { 56 } else { 36 })
                .y_label_area_size(72)
                .build_cartesian_2d(-0.3f64..8.3, 0.0..(high * 1.15).ceil())
                .map_err(err)?;
            let x_label = |v: &f64| {
                let m = 2f64.powf(v.round()) as u64;
                if (v - v.round()).abs() < 1e-6 && ms.contains(&m) { m.to_string() } else { String::new() }
            };
            let mut mesh = chart.configure_mesh();
            mesh.light_line_style(RGBColor(0xf0, 0xf0, 0xf0))
                .x_labels(9)
                .x_label_formatter(&x_label)
                .y_label_formatter(&|v| short(*v))
                .label_style(font(FONT))
                .axis_desc_style(font(FONT))
                .y_desc("µs");
            if i + 1 == layers.len() {
                mesh.x_desc("M (log scale)");
            }
            mesh.draw().map_err(err)?;
            let runs = |s: &Series| -> Vec<(f64, &crate::results::Run)> {
                ms.iter().filter_map(|&m| r.run(&s.id, (m, n, k)).map(|x| ((m as f64).log2(), x))).collect()
            };
            // cuBLAS first, so that the rung's lines and markers lie on top where the two meet.
            for s in &top {
                let best: Vec<(f64, f64)> =
                    runs(s).into_iter().filter_map(|(x, run)| cublas_us(run).map(|t| (x, t))).collect();
                chart
                    .draw_series(DashedLineSeries::new(best.clone(), 10, 6, REFERENCE.stroke_width(2)))
                    .map_err(err)?;
                for pt in best {
                    marker(root, chart.backend_coord(&pt), s.precision, REFERENCE)?;
                }
            }
            for s in &top {
                let pts: Vec<(f64, f64)> = runs(s).into_iter().map(|(x, run)| (x, us(run))).collect();
                chart.draw_series(LineSeries::new(pts.clone(), s.colour.stroke_width(3))).map_err(err)?;
                for pt in pts {
                    marker(root, chart.backend_coord(&pt), s.precision, s.colour)?;
                }
            }
        }
        let below = root.clone().shrink((0, plots_h), (WIDTH, legend_h));
        draw_key(&below, &groups)
    })
}

/// Formats a tick value compactly: 1k, 10k, 0.1, 1M.
pub fn short(v: f64) -> String {
    let trim = |v: f64| {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e3 && v % 1000.0 == 0.0 || a >= 1e5 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every registered step with results is on every chart, tensor-core steps with their own
    /// precision's ceiling, each ceiling labelled once.
    #[test]
    fn every_step_is_charted() {
        // plotters writes a text's content on its own line.
        let label = |s: &str| format!(">\n{s}\n<");
        let all = crate::results::load_all(&crate::bundle::root()).unwrap();
        for r in &all {
            let (bars, scaling, roof) = (gflops(r), scaling(r), crate::svg::roofline::roofline(r));
            let recorded = series(r);
            assert!(!recorded.is_empty());
            for s in &recorded {
                assert!(bars.contains(&label(&s.label)), "{}: no bar for {}", r.slug, s.id);
                assert!(
                    scaling.contains(&label(&format!("step {}", s.step))),
                    "{}: {} not in the scaling legend",
                    r.slug,
                    s.id
                );
                assert!(roof.contains(&label(&name(s.precision))), "{}: no marker for {}", r.slug, s.precision);
            }
            for p in precisions(&recorded).into_iter().filter(|p| reference(*p) == *p && *p != Precision::F32) {
                let labels = crate::svg::roofline::ceiling_labels(
                    &crate::svg::roofline::ceilings(r, &recorded),
                    |c| (-100.0 * c.log10()) as i32,
                    20,
                );
                let named = labels.iter().filter(|(l, _)| l.split(", ").any(|n| n == name(p.arithmetic()))).count();
                assert_eq!(named, 1, "{}: ceiling {p} in {labels:?}", r.slug);
                // Its panel's caption and its legend entry.
                assert!(scaling.matches(&label(&name(p))).count() >= 2, "{}: panel {p}", r.slug);
            }
            // One colour per step: never two steps alike.
            let colours = step_colours(&recorded);
            for (i, a) in colours.iter().enumerate() {
                assert!(colours[i + 1..].iter().all(|b| b.1 != a.1), "{}: step {} shares a colour", r.slug, a.0);
            }
        }
    }

    #[test]
    fn tick_labels() {
        assert_eq!(short(50_000.0), "50k");
        assert_eq!(short(1024.0), "1024");
        assert_eq!(short(0.25), "0.25");
        assert_eq!(short(2_500_000.0), "2.5M");
    }
}
