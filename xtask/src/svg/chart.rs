//! The book's charts, drawn with plotters' SVG backend from the recorded results. Every
//! registered step that has results appears, tensor-core steps against cuBLAS in their own
//! precision. Output is deterministic (integer coordinates, no system fonts), so
//! `cargo xtask book --check` can compare it byte for byte.

use crate::book::{HEADLINE, Results, f, number};
use common::{Gemm, Precision, Shape};
use plotters::coord::Shift;
use plotters::prelude::*;

/// Canvas and fonts: about 680 units wide, so that a 400-pixel phone screen (a scale of about
/// 0.55) still shows the labels at 11 pixels.
const WIDTH: u32 = 680;
const FONT: u32 = 22;
const TITLE: u32 = 26;
/// One colour per registered step (Tableau 10), by registry position.
const PALETTE: [RGBColor; 10] = [
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
];
/// cuBLAS and the roofs.
const REFERENCE: RGBColor = RGBColor(0x22, 0x22, 0x22);

/// A registered step with results: its id, short label, precision and colour.
struct Series {
    id: String,
    label: String,
    precision: Precision,
    colour: RGBColor,
}

fn series(r: &Results) -> Vec<Series> {
    steps::ALL
        .iter()
        .enumerate()
        .filter(|(_, s)| r.runs().any(|x| x["step"] == s.id().as_str()))
        .map(|(i, s)| Series {
            id: s.id(),
            label: match s.precision {
                Precision::F32 => number(s.name).to_string(),
                p => format!("{} {p}", number(s.name)),
            },
            precision: s.precision,
            colour: PALETTE[i % PALETTE.len()],
        })
        .collect()
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Renders `draw` onto a white canvas of `WIDTH` x `height` and returns the SVG text.
fn render(height: u32, draw: impl FnOnce(&Area) -> Result<(), String>) -> String {
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

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn font(size: u32) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&REFERENCE)
}

/// How a legend entry is marked.
#[derive(Clone, Copy, PartialEq)]
enum Mark {
    Line,
    Dashed,
    Dot,
}

/// A legend drawn below a chart, in columns.
fn legend(area: &Area, entries: &[(String, RGBColor, Mark)], columns: usize) -> Result<(), String> {
    let col_w = (WIDTH as i32 - 20) / columns as i32;
    for (i, (label, colour, mark)) in entries.iter().enumerate() {
        let (x, y) = (20 + col_w * (i % columns) as i32, 14 + 30 * (i / columns) as i32);
        let style = colour.stroke_width(4);
        match mark {
            Mark::Dashed => {
                area.draw(&PathElement::new(vec![(x, y), (x + 12, y)], style)).map_err(err)?;
                area.draw(&PathElement::new(vec![(x + 20, y), (x + 32, y)], style)).map_err(err)?;
            }
            Mark::Line => area.draw(&PathElement::new(vec![(x, y), (x + 32, y)], style)).map_err(err)?,
            Mark::Dot => area.draw(&Circle::new((x + 16, y), 6, colour.filled())).map_err(err)?,
        }
        area.draw(&Text::new(label.clone(), (x + 40, y - 10), font(FONT))).map_err(err)?;
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
            Some((f(&x["gflops"]), f(&x["cublas_gflops"]), s))
        })
        .map(|(g, c, s)| (s, g, c))
        .collect();
    let n = rows.len();
    render(130 + 44 * n as u32, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(format!("GFLOP/s per step at {}³ (log)", HEADLINE.0), font(TITLE))
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(110)
            .build_cartesian_2d((100f64..1e6).log_scale(), -0.5f64..n as f64 - 0.5)
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
            .x_desc("GFLOP/s; black mark: cuBLAS, same precision")
            .label_style(font(FONT))
            .axis_desc_style(font(FONT))
            .draw()
            .map_err(err)?;
        for (i, (s, g, cublas)) in rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            chart.draw_series([Rectangle::new([(100.0, y - 0.32), (*g, y + 0.32)], s.colour.filled())]).map_err(err)?;
            let value = Text::new(format!("{g:.0}"), (120.0, y + 0.14), font(FONT - 2));
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

/// GFLOP/s against N for N x N x N, every step (log-log), with cuBLAS SGEMM dashed.
pub fn scaling(r: &Results) -> String {
    let squares: Vec<u64> = r.shapes().into_iter().filter(|&(m, n, k)| m == n && n == k).map(|s| s.0).collect();
    let all = series(r);
    let mut entries: Vec<_> = all.iter().map(|s| (s.label.clone(), s.colour, Mark::Line)).collect();
    entries.push(("cuBLAS SGEMM".into(), REFERENCE, Mark::Dashed));
    let legend_h = 30 * entries.len().div_ceil(3) as u32 + 10;
    render(500 + legend_h, |root| {
        let (plot, below) = root.split_vertically(500);
        // x is log2 N on a linear axis, so that every power of two of the sweep gets a tick.
        let (lo, hi) = (
            (squares.iter().copied().min().unwrap_or(1) as f64).log2() - 0.3,
            (squares.iter().copied().max().unwrap_or(2) as f64).log2() + 0.3,
        );
        let mut chart = ChartBuilder::on(&plot)
            .caption("GFLOP/s against size, N x N x N", font(TITLE))
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(80)
            .build_cartesian_2d(lo..hi, (10f64..1e6).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .light_line_style(RGBColor(0xf0, 0xf0, 0xf0))
            .x_labels((hi - lo) as usize + 1)
            .x_label_formatter(&|v| if v.fract().abs() < 1e-6 { short(2f64.powf(*v)) } else { String::new() })
            .y_label_formatter(&|v| short(*v))
            .x_desc("N (log scale)")
            .y_desc("GFLOP/s")
            .label_style(font(FONT))
            .axis_desc_style(font(FONT))
            .draw()
            .map_err(err)?;
        let points = |id: &str, key: &str| -> Vec<(f64, f64)> {
            squares.iter().filter_map(|&n| r.run(id, (n, n, n)).map(|x| ((n as f64).log2(), f(&x[key])))).collect()
        };
        for s in &all {
            let pts = points(&s.id, "gflops");
            chart.draw_series(LineSeries::new(pts.clone(), s.colour.stroke_width(3))).map_err(err)?;
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, s.colour.filled()))).map_err(err)?;
        }
        if let Some(first) = r.steps().first() {
            let pts = points(first, "cublas_gflops");
            chart.draw_series(DashedLineSeries::new(pts, 10, 6, REFERENCE.stroke_width(2))).map_err(err)?;
        }
        legend(&below, &entries, 3)
    })
}

/// The roofline: the measured copy bandwidth and the FP32 SIMT peak from the results file,
/// cuBLAS in each tensor-core precision as that precision's measured ceiling, and every step at
/// 4096³ (circles) and at 16 x 11008 x 4096 (triangles), at the intensity of its element size.
pub fn roofline(r: &Results) -> String {
    let peak = f(r.gpu("peak_fp32_gflops"));
    let copy = f(r.gpu("measured_copy_gbs"));
    let all = series(r);
    let skinny = (16, 11008, 4096);
    let intensity = |(m, n, k): (u64, u64, u64), p: Precision| {
        Gemm::new(Shape::new(m as usize, n as usize, k as usize), 1.0, 0.0).arithmetic_intensity(p.input().bytes())
    };
    // Each tensor-core precision's ceiling: cuBLAS in that precision at 4096³, same sweep.
    let mut ceilings: Vec<(String, f64)> = vec![("FP32 SIMT peak".into(), peak)];
    for s in all.iter().filter(|s| s.precision != Precision::F32) {
        if let Some(x) = r.run(&s.id, HEADLINE) {
            ceilings.push((format!("cuBLAS {}", s.precision), f(&x["cublas_gflops"])));
        }
    }
    let top = ceilings.iter().map(|c| c.1).fold(peak, f64::max);
    let mut entries: Vec<_> = all.iter().map(|s| (s.label.clone(), s.colour, Mark::Dot)).collect();
    entries.push(("cuBLAS SGEMM".into(), REFERENCE, Mark::Dot));
    entries.push((format!("copy {copy:.0} GB/s"), REFERENCE, Mark::Line));
    let legend_h = 30 * entries.len().div_ceil(3) as u32 + 10;
    render(520 + legend_h, |root| {
        let (plot, below) = root.split_vertically(520);
        let mut chart = ChartBuilder::on(&plot)
            .caption("Roofline: ● 4096³, ▲ 16 x 11008 x 4096", font(TITLE))
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(80)
            .build_cartesian_2d((1f64..10_000.0).log_scale(), (100f64..top * 3.0).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_label_formatter(&|v| short(*v))
            .y_label_formatter(&|v| short(*v))
            .light_line_style(RGBColor(0xf0, 0xf0, 0xf0))
            .x_desc("FLOP per minimal byte")
            .y_desc("GFLOP/s")
            .label_style(font(FONT))
            .axis_desc_style(font(FONT))
            .draw()
            .map_err(err)?;
        // The memory roof up to the highest ceiling; each ceiling from where it meets it.
        let roof = [(1.0, copy), (top / copy, top)];
        chart.draw_series(LineSeries::new(roof, REFERENCE.stroke_width(2))).map_err(err)?;
        for (name, c) in &ceilings {
            // A label goes below its line when the next ceiling up would sit on it.
            let crowded = ceilings.iter().any(|(_, o)| o > c && *o < c * 1.6);
            chart
                .draw_series(DashedLineSeries::new([(c / copy, *c), (10_000.0, *c)], 10, 6, REFERENCE.stroke_width(2)))
                .map_err(err)?;
            let y = if crowded { c / 1.1 } else { c * 1.45 };
            chart.draw_series([Text::new(name.clone(), (1.3, y), font(FONT - 4))]).map_err(err)?;
        }
        for s in &all {
            for (shape, triangle) in [(HEADLINE, false), (skinny, true)] {
                let Some(x) = r.run(&s.id, shape) else { continue };
                let p = (intensity(shape, s.precision), f(&x["gflops"]));
                if triangle {
                    chart.draw_series([TriangleMarker::new(p, 7, s.colour.filled())]).map_err(err)?;
                } else {
                    chart.draw_series([Circle::new(p, 6, s.colour.filled())]).map_err(err)?;
                }
            }
        }
        for (shape, triangle) in [(HEADLINE, false), (skinny, true)] {
            let Some(x) = r.sgemm_run(shape) else { continue };
            let p = (intensity(shape, Precision::F32), f(&x["cublas_gflops"]));
            if triangle {
                chart.draw_series([TriangleMarker::new(p, 7, REFERENCE.filled())]).map_err(err)?;
            } else {
                chart.draw_series([Circle::new(p, 6, REFERENCE.filled())]).map_err(err)?;
            }
        }
        legend(&below, &entries, 3)
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

    #[test]
    fn tick_labels() {
        assert_eq!(short(50_000.0), "50k");
        assert_eq!(short(1024.0), "1024");
        assert_eq!(short(0.25), "0.25");
        assert_eq!(short(2_500_000.0), "2.5M");
    }
}
