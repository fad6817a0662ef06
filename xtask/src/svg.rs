//! A small, dependency-free SVG chart writer: deterministic output (the book's charts are
//! checked in and compared byte for byte by `cargo xtask book --check`).

use std::fmt::Write;

/// One colour per series, readable on white and in grey print.
pub const PALETTE: [&str; 8] = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f"];
/// cuBLAS and ceilings are drawn in black.
pub const REFERENCE: &str = "#222222";

/// Where an axis puts its ticks.
#[derive(Clone, Copy)]
pub enum Ticks<'a> {
    /// Powers of ten (log) or about six round steps (linear).
    Auto,
    /// At these values.
    At(&'a [f64]),
    /// None (categories label themselves).
    Off,
}

/// An axis: linear or log10, with its range, label and ticks.
#[derive(Clone, Copy)]
pub struct Axis<'a> {
    pub min: f64,
    pub max: f64,
    pub log: bool,
    pub label: &'a str,
    pub ticks: Ticks<'a>,
}

impl<'a> Axis<'a> {
    pub fn linear(min: f64, max: f64, label: &'a str) -> Axis<'a> {
        Axis { min, max, log: false, label, ticks: Ticks::Auto }
    }

    pub fn log(min: f64, max: f64, label: &'a str) -> Axis<'a> {
        Axis { min, max, log: true, label, ticks: Ticks::Auto }
    }

    pub fn with_ticks(self, ticks: Ticks<'a>) -> Axis<'a> {
        Axis { ticks, ..self }
    }

    fn frac(&self, v: f64) -> f64 {
        if self.log {
            (v.log10() - self.min.log10()) / (self.max.log10() - self.min.log10())
        } else {
            (v - self.min) / (self.max - self.min)
        }
    }

    /// Tick values.
    fn ticks(&self) -> Vec<f64> {
        match self.ticks {
            Ticks::Off => return Vec::new(),
            Ticks::At(values) => return values.to_vec(),
            Ticks::Auto => {}
        }
        if self.log {
            let (lo, hi) = (self.min.log10().ceil() as i32, self.max.log10().floor() as i32);
            (lo..=hi).map(|e| 10f64.powi(e)).collect()
        } else {
            let raw = (self.max - self.min) / 6.0;
            let mag = 10f64.powf(raw.log10().floor());
            let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(raw);
            let mut v = (self.min / step).ceil() * step;
            let mut out = Vec::new();
            while v <= self.max + step * 1e-9 {
                out.push(v);
                v += step;
            }
            out
        }
    }
}

/// Formats a tick value compactly: 1k, 10k, 0.1, 1M.
pub fn short(v: f64) -> String {
    let a = v.abs();
    if v.fract() == 0.0 && a < 1e5 && v % 1000.0 != 0.0 {
        format!("{v}")
    } else if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e3 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A chart under construction: a plot area with two axes, then marks, then `finish`.
pub struct Chart<'a> {
    out: String,
    x: Axis<'a>,
    y: Axis<'a>,
    left: f64,
    top: f64,
    w: f64,
    h: f64,
    legend: Vec<(String, String, bool)>,
    labels: Vec<(f64, f64)>,
}

impl<'a> Chart<'a> {
    pub fn new(title: &str, x: Axis<'a>, y: Axis<'a>) -> Chart<'a> {
        let (width, height) = (760.0, 440.0);
        let (left, top, right, bottom) = (80.0, 40.0, 200.0, 60.0);
        let mut c = Chart {
            out: String::new(),
            x,
            y,
            left,
            top,
            w: width - left - right,
            h: height - top - bottom,
            legend: Vec::new(),
            labels: Vec::new(),
        };
        let _ = write!(
            c.out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">
<rect width="{width}" height="{height}" fill="white"/>
<text x="{}" y="22" font-size="15" font-weight="bold">{}</text>
"#,
            left,
            esc(title)
        );
        c.frame();
        c
    }

    pub fn px(&self, v: f64) -> f64 {
        self.left + self.x.frac(v) * self.w
    }

    pub fn py(&self, v: f64) -> f64 {
        self.top + (1.0 - self.y.frac(v)) * self.h
    }

    fn frame(&mut self) {
        let (l, t, w, h) = (self.left, self.top, self.w, self.h);
        for v in self.y.ticks() {
            let y = self.py(v);
            let _ =
                writeln!(self.out, r##"<line x1="{l}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#dddddd"/>"##, l + w);
            let _ = writeln!(
                self.out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                l - 6.0,
                y + 4.0,
                short(v)
            );
        }
        for v in self.x.ticks() {
            let x = self.px(v);
            let _ =
                writeln!(self.out, r##"<line x1="{x:.1}" y1="{t}" x2="{x:.1}" y2="{:.1}" stroke="#eeeeee"/>"##, t + h);
            let _ = writeln!(
                self.out,
                r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                t + h + 18.0,
                short(v)
            );
        }
        let _ =
            writeln!(self.out, r##"<rect x="{l}" y="{t}" width="{w}" height="{h}" fill="none" stroke="#444444"/>"##);
        let _ = writeln!(
            self.out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            l + w / 2.0,
            t + h + 42.0,
            esc(self.x.label)
        );
        let _ = writeln!(
            self.out,
            r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">{}</text>"#,
            t + h / 2.0,
            t + h / 2.0,
            esc(self.y.label)
        );
    }

    /// A polyline through the points (skipping those outside the axes), with dots; `dashed` for references.
    pub fn line(&mut self, name: &str, color: &str, points: &[(f64, f64)], dashed: bool) {
        let pts: Vec<String> = points
            .iter()
            .filter(|(x, y)| *x >= self.x.min && *x <= self.x.max && *y >= self.y.min && *y <= self.y.max)
            .map(|&(x, y)| format!("{:.1},{:.1}", self.px(x), self.py(y)))
            .collect();
        let dash = if dashed { r#" stroke-dasharray="6 4""# } else { "" };
        let _ = writeln!(
            self.out,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"{dash}/>"#,
            pts.join(" ")
        );
        if !dashed {
            for p in &pts {
                let (x, y) = p.split_once(',').unwrap_or(("0", "0"));
                let _ = writeln!(self.out, r#"<circle cx="{x}" cy="{y}" r="3" fill="{color}"/>"#);
            }
        }
        self.legend.push((name.to_string(), color.to_string(), dashed));
    }

    /// One labelled point (for the roofline), labelled on the right, or on the left when `left`
    /// is set or the right is taken; a label that still collides moves down a line.
    pub fn point(&mut self, label: &str, color: &str, x: f64, y: f64, left: bool) {
        let (px, py) = (self.px(x), self.py(y));
        let _ = writeln!(self.out, r#"<circle cx="{px:.1}" cy="{py:.1}" r="5" fill="{color}"/>"#);
        let taken = |labels: &[(f64, f64)], lx: f64, ly: f64| {
            labels.iter().any(|&(x0, y0)| (x0 - lx).abs() < 1.0 && (y0 - ly).abs() < 12.0)
        };
        let (right, left_x) = ((px + 8.0, "start"), (px - 8.0, "end"));
        let (mut lx, mut anchor) = if left { left_x } else { right };
        let mut ly = py + 4.0;
        if taken(&self.labels, lx, ly) && !left {
            (lx, anchor) = left_x;
        }
        while taken(&self.labels, lx, ly) {
            ly += 12.0;
        }
        self.labels.push((lx, ly));
        let _ = writeln!(self.out, r#"<text x="{lx:.1}" y="{ly:.1}" text-anchor="{anchor}">{}</text>"#, esc(label));
    }

    /// Vertical bars at category positions 0..n along a linear x axis from -0.5 to n - 0.5.
    pub fn bars(&mut self, bars: &[(String, f64, String)]) {
        let width = self.w / bars.len().max(1) as f64 * 0.7;
        for (i, (label, value, color)) in bars.iter().enumerate() {
            let x = self.px(i as f64) - width / 2.0;
            let y = self.py(*value);
            let base = self.py(self.y.min.max(if self.y.log { self.y.min } else { 0.0 }));
            let _ = writeln!(
                self.out,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{width:.1}" height="{:.1}" fill="{color}"/>"#,
                base - y
            );
            let _ = writeln!(
                self.out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                x + width / 2.0,
                y - 5.0,
                short(*value)
            );
            let _ = writeln!(
                self.out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                x + width / 2.0,
                self.top + self.h + 18.0,
                esc(label)
            );
        }
    }

    /// A horizontal reference line across the plot, labelled just above its left end.
    pub fn hline(&mut self, label: &str, y: f64) {
        let py = self.py(y);
        let _ = writeln!(
            self.out,
            r#"<line x1="{}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="{REFERENCE}" stroke-width="1.5" stroke-dasharray="6 4"/>"#,
            self.left,
            self.left + self.w
        );
        let _ = writeln!(self.out, r#"<text x="{:.1}" y="{:.1}">{}</text>"#, self.left + 6.0, py - 5.0, esc(label));
    }

    pub fn finish(mut self) -> String {
        let x = self.left + self.w + 16.0;
        for (i, (name, color, dashed)) in self.legend.iter().enumerate() {
            let y = self.top + 14.0 + 20.0 * i as f64;
            let dash = if *dashed { r#" stroke-dasharray="6 4""# } else { "" };
            let _ = writeln!(
                self.out,
                r#"<line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{color}" stroke-width="3"{dash}/>"#,
                x + 22.0
            );
            let _ = writeln!(self.out, r#"<text x="{}" y="{}">{}</text>"#, x + 28.0, y + 4.0, esc(name));
        }
        self.out.push_str("</svg>\n");
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_labels() {
        let log = Axis::log(100.0, 100_000.0, "");
        assert_eq!(log.ticks(), vec![100.0, 1000.0, 10_000.0, 100_000.0]);
        assert!(log.with_ticks(Ticks::Off).ticks().is_empty());
        let lin = Axis::linear(0.0, 50_000.0, "");
        assert_eq!(lin.ticks().first(), Some(&0.0));
        assert_eq!(short(50_000.0), "50k");
        assert_eq!(short(1024.0), "1024");
        assert_eq!(short(0.25), "0.25");
        assert_eq!(short(2_500_000.0), "2.5M");
    }

    #[test]
    fn charts_are_deterministic_svg() {
        let make = || {
            let mut c = Chart::new("t <1>", Axis::linear(1.0, 10.0, "x"), Axis::linear(0.0, 5.0, "y"));
            c.line("a", PALETTE[0], &[(1.0, 1.0), (5.0, 4.0)], false);
            c.finish()
        };
        let svg = make();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert!(svg.contains("t &lt;1&gt;"));
        assert_eq!(svg, make());
    }
}
