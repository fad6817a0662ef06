//! The roofline chart: every step at two shapes against the memory roof and each precision's
//! measured ceiling, drawn with the helpers of `chart.rs`.

use super::chart::*;
use crate::results::{HEADLINE, Results};
use common::{Gemm, Precision, Shape};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The ceilings of the roofline, highest first, each named by its precision: the FP32 SIMT peak,
/// and the best cuBLAS in each tensor-core precision at 4096³ as that precision's measured
/// ceiling (3xTF32: a third of TF32's, for its three products).
pub(super) fn ceilings(r: &Results, all: &[Series]) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = vec![("FP32 peak".into(), r.sweep.gpu.peak_fp32_gflops)];
    for p in precisions(all) {
        match p {
            Precision::F32 => {}
            Precision::Tf32x3 => {
                if let Some(c) = cublas(r, all, Precision::Tf32, HEADLINE) {
                    out.push(("3xTF32 (TF32 / 3)".into(), c / 3.0));
                }
            }
            p => {
                if let Some(c) = cublas(r, all, p, HEADLINE) {
                    out.push((name(p.arithmetic()), c));
                }
            }
        }
    }
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

/// One label for each run of `ceilings` (highest first) whose lines lie closer than `label_h`
/// pixels apart: their names, each once ("BF16, FP16"), and the run's highest ceiling.
pub(super) fn ceiling_labels(
    ceilings: &[(String, f64)],
    y_of: impl Fn(f64) -> i32,
    label_h: i32,
) -> Vec<(String, f64)> {
    let mut out: Vec<(Vec<&str>, f64, i32)> = Vec::new();
    for (name, c) in ceilings {
        match out.last_mut() {
            Some((names, _, last_y)) if y_of(*c) - *last_y < label_h + 4 => {
                if !names.contains(&name.as_str()) {
                    names.push(name);
                }
                *last_y = y_of(*c);
            }
            _ => out.push((vec![name.as_str()], *c, y_of(*c))),
        }
    }
    out.into_iter().map(|(names, c, _)| (names.join(", "), c)).collect()
}

/// `label`'s names ("FP8, BF16, FP16") in lines of at most `width` characters, broken after a
/// comma; a name longer than `width` keeps a line of its own.
pub(super) fn wrap(label: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for name in label.split(", ") {
        match lines.last_mut() {
            // One character kept for the comma that ends every line but the last.
            Some(line) if line.chars().count() + 2 + name.chars().count() < width => {
                line.push_str(", ");
                line.push_str(name);
            }
            _ => lines.push(name.to_string()),
        }
    }
    let n = lines.len();
    lines.iter_mut().take(n.saturating_sub(1)).for_each(|l| l.push(','));
    lines
}

/// The roofline: the measured copy bandwidth and the FP32 SIMT peak from the results file, the
/// best cuBLAS in each tensor-core precision as that precision's measured ceiling (3xTF32: a
/// third of TF32's, for its three products), and every step at 4096³ and at 16 x 11008 x 4096,
/// at the intensity of its element size: colour for the step, marker for the precision.
pub fn roofline(r: &Results) -> String {
    let peak = r.sweep.gpu.peak_fp32_gflops;
    let copy = r.sweep.gpu.measured_copy_gbs;
    let all = series(r);
    let skinny = (16, 11008, 4096);
    let intensity = |(m, n, k): (u64, u64, u64), p: Precision| {
        Gemm::new(Shape::new(m as usize, n as usize, k as usize), 1.0, 0.0).arithmetic_intensity(p.input().bytes())
    };
    let ceilings = ceilings(r, &all);
    let top = ceilings.iter().map(|c| c.1).fold(peak, f64::max);
    let (groups, legend_h) = key(
        &all,
        vec![
            ("cuBLAS SGEMM".into(), REFERENCE, Mark::Shape(Precision::F32)),
            (format!("copy {copy:.0} GB/s"), REFERENCE, Mark::Line),
            ("ceilings: cuBLAS, FP32 peak".into(), REFERENCE, Mark::Dashed),
        ],
    );
    render(540 + legend_h, |root| {
        let (plot, below) = root.split_vertically(540);
        let mut chart = ChartBuilder::on(&plot)
            .caption("Roofline: every step at two shapes", font(TITLE))
            .margin(14)
            // Room for the last tick label, centred on the plot's right edge.
            .margin_right(26)
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
        for (_, c) in &ceilings {
            // Left of the roof the ceiling cannot be reached: a faint line there leads from the
            // label to where the ceiling begins.
            chart
                .draw_series(DashedLineSeries::new(
                    [(1.0, *c), (c / copy, *c)],
                    3,
                    5,
                    RGBColor(0x99, 0x99, 0x99).stroke_width(1),
                ))
                .map_err(err)?;
            chart
                .draw_series(DashedLineSeries::new([(c / copy, *c), (10_000.0, *c)], 10, 6, REFERENCE.stroke_width(2)))
                .map_err(err)?;
        }
        // One label per group of ceilings closer than a label's height, just above the group's
        // highest line and left of the roof, where no point can be; if it is too long for that,
        // right of the roof where it passes the label's top, so that the roof does not cross it.
        // A label too long for either is wrapped at its commas into the lines that fit between
        // its ceiling and the label above (the plot's top for the highest).
        let label_h = FONT as i32 * 4 / 5;
        let y_of = |c: f64| chart.backend_coord(&(1.0, c)).1;
        let mut above = chart.backend_coord(&(1.0, top * 3.0)).1;
        for (label, c) in ceiling_labels(&ceilings, y_of, label_h) {
            let (line_y, left) = (y_of(c), chart.backend_coord(&(1.05, c)).0);
            let room = ((line_y - 3 - above) / label_h).max(1) as usize;
            above = line_y;
            let meets = chart.backend_coord(&(c / copy, c)).0;
            let right = chart.backend_coord(&(10_000.0, c)).0;
            // The roof is straight on the log-log axes: its x at a height, from two of its points.
            let (x2, y2) = chart.backend_coord(&(2.0 * c / copy, 2.0 * c));
            let roof_at = |y: i32| meets + (y - line_y) * (x2 - meets) / (y2 - line_y).min(-1);
            let fits = |width: i32| wrap(&label, (width.max(0) as u32 * 100 / (FONT * 45)) as usize);
            let (x, lines) = match fits(meets - 6 - left) {
                lines if lines.len() <= room => (left, lines),
                _ => {
                    // Right of the roof at the top of one line, then of as many as that takes.
                    let one = roof_at(line_y - label_h - 3) + 6;
                    let n = fits(right - one).len().min(room) as i32;
                    let x = roof_at(line_y - n * label_h - 3) + 6;
                    (x, fits(right - x))
                }
            };
            let n = lines.len() as i32;
            for (i, line) in lines.into_iter().enumerate() {
                let y = line_y - 3 - (n - i as i32) * label_h;
                plot.draw(&Text::new(line, (x, y), font(FONT))).map_err(err)?;
            }
        }
        // The points, nudged sideways where they would cover one drawn before.
        let mut placed: Vec<(i32, i32)> = Vec::new();
        let mut place = |(x, y): (i32, i32)| {
            let d = 15;
            let free = |x: i32| placed.iter().all(|&(px, py)| (px - x).pow(2) + (py - y).pow(2) >= d * d);
            let x = [0, d, -d, 2 * d, -2 * d, 3 * d].into_iter().map(|o| x + o).find(|&x| free(x)).unwrap_or(x);
            placed.push((x, y));
            (x, y)
        };
        let mut points: Vec<((f64, f64), Precision, RGBColor)> = Vec::new();
        for s in &all {
            for shape in [HEADLINE, skinny] {
                if let Some(x) = r.run(&s.id, shape) {
                    points.push(((intensity(shape, s.precision), x.gflops), s.precision, s.colour));
                }
            }
        }
        for shape in [HEADLINE, skinny] {
            if let Some(g) = cublas(r, &all, Precision::F32, shape) {
                points.push(((intensity(shape, Precision::F32), g), Precision::F32, REFERENCE));
            }
        }
        for (p, precision, colour) in points {
            marker(&plot, place(chart.backend_coord(&p)), precision, colour)?;
        }
        // Which cluster is which shape: a label under the lowest point of each.
        for (shape, text) in [(HEADLINE, format!("{}³", HEADLINE.0)), (skinny, "16 x 11008 x 4096".to_string())] {
            let lowest = all
                .iter()
                .filter_map(|s| r.run(&s.id, shape).map(|x| (intensity(shape, s.precision), x.gflops)))
                .fold(None, |low: Option<(f64, f64)>, p| Some(low.map_or(p, |l| if p.1 < l.1 { p } else { l })));
            let Some((_, y)) = lowest else { continue };
            let x = chart.backend_coord(&(intensity(shape, Precision::F32), y));
            plot.draw(&Text::new(text, (x.0, x.1 + 14), font(FONT).pos(Pos::new(HPos::Center, VPos::Top))))
                .map_err(err)?;
        }
        draw_key(&below, &groups)
    })
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn labels_wrap_after_commas() {
        assert_eq!(wrap("FP8, FP8 block-scaled, BF16, FP16, TF32", 40), ["FP8, FP8 block-scaled, BF16, FP16, TF32"]);
        assert_eq!(wrap("FP8, FP8 block-scaled, BF16, FP16, TF32", 24), ["FP8, FP8 block-scaled,", "BF16, FP16, TF32"]);
        // Every line within the width, its comma included, unless it is one name too long for it;
        // the lines read as the label.
        let label = "FP8, FP8 block-scaled, BF16, FP16, TF32";
        for width in 1..45 {
            let lines = wrap(label, width);
            assert_eq!(lines.join(" "), label, "width {width}");
            assert!(lines.iter().all(|l| l.chars().count() <= width || !l.trim_end_matches(',').contains(", ")));
        }
    }
}
