//! Drawing helpers shared by the diagrams.

use crate::svg::geometry::Geometry;
use svg::Document;
use svg::node::element::{Line, Rectangle, Text};

/// Font sizes: the diagrams are at most about 540 units wide, so that scaled down to a 400-pixel
/// phone screen (about 0.7) the small text is still 11 pixels.
pub(super) const FONT: u32 = 19;
pub(super) const SMALL: u32 = 16;
pub(super) const INK: &str = "#222222";
pub(super) const FAINT: &str = "#e8edf3";
pub(super) const PAD_FILL: &str = "#b8b8b8";
/// One colour per warp (Tableau 10).
pub(super) const WARP: [&str; 8] =
    ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f"];

pub(super) fn document(w: u32, h: u32) -> Document {
    Document::new()
        .set("viewBox", format!("0 0 {w} {h}"))
        .set("width", w)
        .set("height", h)
        .set("font-family", "sans-serif")
        .set("font-size", FONT)
        .add(Rectangle::new().set("width", w).set("height", h).set("fill", "white"))
}

pub(super) fn rect(x: f64, y: f64, w: f64, h: f64, fill: &str) -> Rectangle {
    Rectangle::new().set("x", x).set("y", y).set("width", w).set("height", h).set("fill", fill)
}

pub(super) fn text(x: f64, y: f64, s: impl Into<String>) -> Text {
    Text::new(s).set("x", x).set("y", y)
}

pub(super) fn line(x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str) -> Line {
    Line::new().set("x1", x1).set("y1", y1).set("x2", x2).set("y2", y2).set("stroke", stroke)
}

/// Lane 0 blue through lane 31 orange.
pub(super) fn lane_colour(lane: usize) -> String {
    format!("hsl({}, 75%, 45%)", 215 - lane * 185 / 31)
}

/// The same, light enough for dark text on it.
pub(super) fn lane_tint(lane: usize) -> String {
    format!("hsl({}, 75%, 78%)", 215 - lane * 185 / 31)
}

/// Title and subtitle lines at the top.
pub(super) fn heading(mut doc: Document, lines: &[&str]) -> Document {
    for (i, l) in lines.iter().enumerate() {
        let t = text(12.0, 26.0 + 22.0 * i as f64, *l);
        doc = doc.add(if i == 0 { t.set("font-weight", "bold") } else { t });
    }
    doc
}

/// A lane-colour legend: a gradient of 32 swatches from "lane 0" to "lane 31".
pub(super) fn lane_legend(mut doc: Document, x: f64, y: f64, w: f64) -> Document {
    let sw = w / 32.0;
    for lane in 0..32 {
        doc = doc.add(rect(x + sw * lane as f64, y, sw, 14.0, &lane_colour(lane)));
    }
    doc.add(text(x, y + 32.0, "lane 0").set("font-size", SMALL))
        .add(text(x + w, y + 32.0, "lane 31").set("font-size", SMALL).set("text-anchor", "end"))
}

/// The threads of warp 0 as (tx, ty): 32 consecutive thread ids, x fastest.
pub(super) fn warp0(g: &Geometry) -> Vec<(usize, usize)> {
    let (bx, _) = g.block();
    (0..32).map(|t| (t % bx, t / bx)).collect()
}
