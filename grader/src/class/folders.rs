//! Where `grade-class` writes, inside its output folder: each student's card, printed card,
//! staff's record and end, by the student's id, and the roster of the run.

use super::roster::Entry;
use serde_json::Value;
use std::path::{Path, PathBuf};

pub fn card_path(out: &Path, id: &str) -> PathBuf {
    out.join("students").join(format!("{id}.json"))
}

pub fn staff_path(out: &Path, id: &str) -> PathBuf {
    out.join("staff").join(format!("{id}.txt"))
}

pub fn ended_path(out: &Path, id: &str) -> PathBuf {
    out.join("ended").join(format!("{id}.json"))
}

/// The folders of `out` that grading writes into.
pub const FOLDERS: [&str; 4] = ["students", "cards", "staff", "ended"];

/// The roster of a previous run in `out`.
pub fn load_roster(out: &Path) -> Result<Vec<Entry>, String> {
    let path = out.join("roster.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: {e} (run grade-class with --submissions first)", path.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    v["students"].as_array().ok_or(format!("{}: no students", path.display()))?.iter().map(Entry::from_json).collect()
}
