//! The submissions of a class, as a course's submission system exports them: one file or one
//! folder per student. Each gets a stable id from its name; what cannot be graded (a folder with
//! no `.cu`, or several) is recorded with the reason instead.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// One student's entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Stable, safe for file names: lower-case letters, digits, `.`, `_` and `-`.
    pub id: String,
    /// The name as exported.
    pub name: String,
    /// The kernel to grade, or why there is none.
    pub file: Result<PathBuf, String>,
}

/// A submission's file name as a student id: letters, digits, `_` and `.` kept (lower case),
/// everything else one `-`; "student" when nothing is left.
fn slug(name: &str) -> String {
    let out = common::names::slug(name, &['_', '.']);
    let out = out.trim_matches(|c| c == '-' || c == '.');
    if out.is_empty() { "student".into() } else { out.to_string() }
}

/// The `.cu` files directly in `dir`, sorted.
fn kernels_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "cu"))
        .collect();
    v.sort();
    v
}

/// Every submission in `dir`, sorted by id; ids made unique with `-2`, `-3`, ...
pub fn discover(dir: &Path) -> Result<Vec<Entry>, String> {
    let mut items: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read the submissions folder {}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
        .collect();
    items.sort();
    let mut out: Vec<Entry> = Vec::new();
    for path in items {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let (stem, file) = if path.is_dir() {
            let found = kernels_in(&path);
            let file = match found.len() {
                0 => Err("no submission found: the folder holds no .cu file".to_string()),
                1 => Ok(found[0].clone()),
                _ => Err(format!(
                    "several .cu files: {}; submit one",
                    found
                        .iter()
                        .map(|f| f.file_name().unwrap_or_default().to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            };
            (name.clone(), file)
        } else if path.extension().is_some_and(|e| e == "cu") {
            (name.trim_end_matches(".cu").to_string(), Ok(path.clone()))
        } else {
            continue;
        };
        let base = slug(&stem);
        let mut id = base.clone();
        let mut n = 2;
        while out.iter().any(|e| e.id == id) {
            id = format!("{base}-{n}");
            n += 1;
        }
        out.push(Entry { id, name, file });
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

impl Entry {
    pub fn to_json(&self) -> Value {
        match &self.file {
            Ok(f) => json!({ "id": self.id, "name": self.name, "file": f }),
            Err(why) => json!({ "id": self.id, "name": self.name, "problem": why }),
        }
    }

    pub fn from_json(v: &Value) -> Result<Entry, String> {
        let text = |k: &str| v[k].as_str().map(str::to_string);
        Ok(Entry {
            id: text("id").ok_or("roster entry without id")?,
            name: text("name").unwrap_or_default(),
            file: match text("file") {
                Some(f) => Ok(PathBuf::from(f)),
                None => Err(text("problem").unwrap_or_else(|| "no submission".into())),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_stable_unique_ids() {
        assert_eq!(slug("Doe, Jane_12345_678_kernel"), "doe-jane_12345_678_kernel");
        assert_eq!(slug("  Ünïcode  name!"), "n-code-name");
        assert_eq!(slug("../.."), "student");
        let dir = std::env::temp_dir().join(format!("roster-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("Doe, Jane_1")).unwrap();
        std::fs::write(dir.join("Doe, Jane_1/kernel.cu"), "x").unwrap();
        std::fs::create_dir_all(dir.join("empty")).unwrap();
        std::fs::create_dir_all(dir.join("two")).unwrap();
        std::fs::write(dir.join("two/a.cu"), "x").unwrap();
        std::fs::write(dir.join("two/b.cu"), "x").unwrap();
        std::fs::write(dir.join("bob.cu"), "x").unwrap();
        std::fs::write(dir.join("BOB.cu"), "x").unwrap();
        std::fs::write(dir.join("notes.txt"), "x").unwrap();
        let r = discover(&dir).unwrap();
        let ids: Vec<&str> = r.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["bob", "bob-2", "doe-jane_1", "empty", "two"]);
        assert!(r[3].file.as_ref().unwrap_err().contains("no submission found"));
        assert!(r[4].file.as_ref().unwrap_err().contains("several .cu files: a.cu, b.cu"));
        assert_eq!(Entry::from_json(&r[2].to_json()).unwrap(), r[2]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
