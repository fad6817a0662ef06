//! The submissions of a class, as a course's submission system exports them: one file or one
//! folder per student. Each gets a stable id from its name; what cannot be graded (a folder with
//! no `.cu`, or several) is recorded with the reason instead. Entries are looked at, never
//! followed or opened: a link, a FIFO or a device where a kernel is expected is a student's
//! entry that `grade` refuses, with the reason on the card.

use crate::submission::printable;
use serde_json::{Value, json};
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// One student's entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Stable, safe for file names: lower-case letters, digits, `.`, `_` and `-`.
    pub id: String,
    /// The name as exported, as text.
    pub name: String,
    /// The kernel to grade, or why there is none.
    pub file: Result<PathBuf, String>,
}

/// A submission's file name as a student id: letters, digits, `_` and `.` kept (lower case),
/// everything else one `-`; "student" when nothing is left.
fn slug(name: &str) -> String {
    let out = common::harness::names::slug(name, &['_', '.']);
    let out = out.trim_matches(|c| c == '-' || c == '.');
    if out.is_empty() { "student".into() } else { out.to_string() }
}

/// The `.cu` entries directly in `dir` (of any type: `grade` refuses what is not a regular
/// file), sorted.
fn kernels_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    v.sort();
    v
}

/// Whether an entry of the submissions folder is a student's: a folder, a `.cu` of any type, or a
/// link to a folder (refused when graded). Other files (notes, exported lists) are not.
fn is_student(path: &Path, file_type: std::fs::FileType) -> bool {
    let cu = path.extension().is_some_and(|e| e == "cu");
    file_type.is_dir() || cu || (file_type.is_symlink() && path.is_dir())
}

/// Every submission in `dir`, sorted by id; ids made unique with `-2`, `-3`, ...
pub fn discover(dir: &Path) -> Result<Vec<Entry>, String> {
    let mut items: Vec<(PathBuf, std::fs::FileType)> = Vec::new();
    for entry in
        std::fs::read_dir(dir).map_err(|e| format!("cannot read the submissions folder {}: {e}", dir.display()))?
    {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let (path, file_type) = (entry.path(), entry.file_type().map_err(|e| format!("{}: {e}", dir.display()))?);
        if !entry.file_name().as_bytes().starts_with(b".") && is_student(&path, file_type) {
            items.push((path, file_type));
        }
    }
    items.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out: Vec<Entry> = Vec::new();
    for (path, file_type) in items {
        let name = printable(path.file_name().unwrap_or_default());
        let (stem, file) = if file_type.is_dir() {
            let found = kernels_in(&path);
            let file = match found.len() {
                0 => Err("no submission found: the folder holds no .cu file".to_string()),
                1 => Ok(found[0].clone()),
                _ => Err(format!(
                    "several .cu files: {}; submit one",
                    found.iter().map(|f| printable(f.file_name().unwrap_or_default())).collect::<Vec<_>>().join(", ")
                )),
            };
            (name.clone(), file)
        } else {
            (name.trim_end_matches(".cu").to_string(), Ok(path.clone()))
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
    /// The entry as `roster.json` keeps it: a path that is not UTF-8 also as the hex of its
    /// bytes (`file_hex`), which is what is read back.
    pub fn to_json(&self) -> Value {
        match &self.file {
            Ok(f) => {
                let mut v = json!({ "id": self.id, "name": self.name, "file": f.to_string_lossy() });
                if f.to_str().is_none() {
                    v["file_hex"] =
                        f.as_os_str().as_bytes().iter().map(|b| format!("{b:02x}")).collect::<String>().into();
                }
                v
            }
            Err(why) => json!({ "id": self.id, "name": self.name, "problem": why }),
        }
    }

    pub fn from_json(v: &Value) -> Result<Entry, String> {
        let text = |k: &str| v[k].as_str().map(str::to_string);
        let hex = |h: &str| -> Option<PathBuf> {
            let bytes: Option<Vec<u8>> =
                (0..h.len()).step_by(2).map(|i| h.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok())).collect();
            bytes.map(|b| PathBuf::from(OsString::from_vec(b)))
        };
        Ok(Entry {
            id: text("id").ok_or("roster entry without id")?,
            name: text("name").unwrap_or_default(),
            file: match (text("file_hex").and_then(|h| hex(&h)), text("file")) {
                (Some(f), _) => Ok(f),
                (None, Some(f)) => Ok(PathBuf::from(f)),
                (None, None) => Err(text("problem").unwrap_or_else(|| "no submission".into())),
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

    /// Links, FIFOs and names that are not UTF-8 are students' entries, kept as they are (never
    /// followed); a path that is not UTF-8 survives roster.json byte for byte.
    #[test]
    fn odd_entries_are_kept_unfollowed() {
        let dir = std::env::temp_dir().join(format!("roster-odd-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("elsewhere")).unwrap();
        std::fs::write(dir.join("elsewhere/kernel.cu"), "x").unwrap();
        std::os::unix::fs::symlink(dir.join("elsewhere"), dir.join("linked")).unwrap();
        std::os::unix::fs::symlink(dir.join("elsewhere/kernel.cu"), dir.join("link.cu")).unwrap();
        std::fs::create_dir_all(dir.join("folder")).unwrap();
        std::os::unix::fs::symlink(dir.join("elsewhere/kernel.cu"), dir.join("folder/kernel.cu")).unwrap();
        let latin1 = dir.join(std::ffi::OsStr::from_bytes(b"caf\xe9 \n$(x).cu"));
        std::fs::write(&latin1, "x").unwrap();
        std::fs::write(dir.join("notes.txt"), "x").unwrap();
        let r = discover(&dir).unwrap();
        let ids: Vec<&str> = r.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["caf-n-x", "elsewhere", "folder", "link", "linked"]);
        assert_eq!(r[0].name, "caf\u{fffd} \\n$(x).cu");
        assert_eq!(r[0].file.as_ref().unwrap(), &latin1);
        assert_eq!(Entry::from_json(&r[0].to_json()).unwrap(), r[0]);
        assert_eq!(r[2].file.as_ref().unwrap(), &dir.join("folder/kernel.cu"));
        assert_eq!(r[3].file.as_ref().unwrap(), &dir.join("link.cu"));
        assert_eq!(r[4].file.as_ref().unwrap(), &dir.join("linked"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
