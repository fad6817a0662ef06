//! `grade-class` over a folder as a hostile or careless export holds it, made here in a fresh
//! temporary folder: names with a leading `-`, spaces, quotes, `$()`, backticks, `;`, HTML, a
//! newline, bytes that are not UTF-8 and a spreadsheet formula; links (to the hidden cases, to a
//! folder), a FIFO, a NUL byte, an empty file, one over the size limit, a kernel with no `sgemm`,
//! one that does not compile, a Latin-1 comment, a kernel that prints every launch's shape.
//! Graded with the GPU where there is one, else with `--no-gpu` (CI), it must give every student
//! their one-line reason in the card, `class.csv` and `report.html`, escape every name, show no
//! hidden case and no secret outside the staff's records, and create nothing outside `--out`.

use super::lab;
use libtest_mimic::Failed;
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How an entry of the folder is made.
enum Make {
    File(Vec<u8>),
    Link(PathBuf),
    Fifo,
    Folder(Vec<(&'static str, Make)>),
}

fn make(path: &Path, what: &Make) -> std::io::Result<()> {
    match what {
        Make::File(bytes) => std::fs::write(path, bytes),
        Make::Link(to) => std::os::unix::fs::symlink(to, path),
        Make::Fifo => super::fifo(path),
        Make::Folder(entries) => {
            std::fs::create_dir(path)?;
            entries.iter().try_for_each(|(name, what)| make(&path.join(name), what))
        }
    }
}

/// The class: (exported name, how it is made, what its row must say with a GPU and without).
fn class(hidden: &Path, elsewhere: &Path) -> Vec<(OsString, Make, &'static str, &'static str)> {
    let honest = || Make::File(lab("honest-slow.cu").as_bytes().to_vec());
    let (passed, compiles) = ("passed", "compiles (no GPU: cases not run)");
    let mut latin1 = lab("honest-slow.cu").as_bytes().to_vec();
    latin1.extend_from_slice(b"// caf\xe9: a comment in ISO-8859-1\n");
    let mut nul = lab("honest-slow.cu").as_bytes().to_vec();
    nul.push(0);
    let typo = b"#include \"sgemm.cuh\"\nextern \"C\" __global__ void sgemm(int M, int N, int K, float alpha, \
                 const float* A, const float* B, float beta, float* C) { oops = 1; }\n";
    let name = |s: &str| OsString::from(s);
    let refused = |kind: &'static str| (kind, kind);
    let mut out = vec![
        (name("-rf.cu"), honest(), passed, compiles),
        (name("--help.cu"), honest(), passed, compiles),
        (name("Doe, Jane_1001"), Make::Folder(vec![("kernel.cu", honest())]), passed, compiles),
        (name("O'Brien \"Pat\" <b>_1002"), Make::Folder(vec![("my kernel.cu", honest())]), passed, compiles),
        (name("$(touch pwned).cu"), honest(), passed, compiles),
        (name("`touch pwned2`.cu"), honest(), passed, compiles),
        (name("a; touch pwned3 #.cu"), honest(), passed, compiles),
        (name("<img src=x onerror=alert(1)>.cu"), honest(), passed, compiles),
        (name("new\nline.cu"), honest(), passed, compiles),
        (OsString::from_vec(b"caf\xe9.cu".to_vec()), honest(), passed, compiles),
        (name("=1+1.cu"), honest(), passed, compiles),
        (name("latin1-comment.cu"), Make::File(latin1), passed, compiles),
        (name("printf-hidden.cu"), Make::File(lab("printf-hidden-cases.cu").as_bytes().to_vec()), passed, compiles),
        (name("typo.cu"), Make::File(typo.to_vec()), "does not compile", "does not compile"),
        (name("no-sgemm.cu"), Make::File(lab("no-sgemm.cu").as_bytes().to_vec()), "no `sgemm` kernel", ""),
        (name("two"), Make::Folder(vec![("a.cu", honest()), ("b.cu", honest())]), "several .cu files", ""),
        (name("nothing"), Make::Folder(vec![("notes.txt", Make::File(b"x".to_vec()))]), "no submission", ""),
    ];
    let refusals = [
        (name("link.cu"), Make::Link(hidden.to_path_buf()), refused("refused: a symbolic link")),
        (name("linked-folder"), Make::Link(elsewhere.to_path_buf()), refused("refused: a symbolic link")),
        (
            name("folder-with-link"),
            Make::Folder(vec![("kernel.cu", Make::Link(hidden.to_path_buf()))]),
            refused("refused: a symbolic link"),
        ),
        (name("fifo.cu"), Make::Fifo, refused("refused: not a regular file")),
        (name("nul.cu"), Make::File(nul), refused("refused: a NUL byte")),
        (name("empty.cu"), Make::File(Vec::new()), refused("refused: empty")),
        (name("oversize.cu"), Make::File(vec![b'/'; (1 << 20) + 1]), refused("refused: too large")),
    ];
    out.extend(refusals.into_iter().map(|(n, m, (gpu, no_gpu))| (n, m, gpu, no_gpu)));
    // The compile stage names these without a GPU as with one.
    for row in &mut out {
        if row.3.is_empty() {
            row.3 = row.2;
        }
    }
    out.push((name("notes.txt"), Make::File(b"not a submission".to_vec()), "", ""));
    out
}

/// Every path below `dir` with its type and size (links not followed).
fn listing(dir: &Path) -> BTreeMap<PathBuf, (String, u64)> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let meta = std::fs::symlink_metadata(entry.path()).unwrap();
        out.insert(entry.path(), (format!("{:?}", meta.file_type()), meta.len()));
        if meta.is_dir() {
            out.extend(listing(&entry.path()));
        }
    }
    out
}

/// The fields of a CSV line (quoted fields, doubled quotes).
fn fields(line: &str) -> Vec<String> {
    let (mut out, mut field, mut quoted, mut chars) = (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => field.push(chars.next().unwrap()),
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    out.push(field);
    out
}

pub fn grade_the_class(gpu: bool) -> Result<(), Failed> {
    let root = std::env::temp_dir().join(format!("class-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (subs, out, cwd, tmp, staff) =
        (root.join("subs"), root.join("out"), root.join("cwd"), root.join("tmp"), root.join("staff-files"));
    for d in [&subs, &cwd, &tmp, &staff, &staff.join("elsewhere")] {
        std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
    }
    let secret = format!("SECRET{:016x}", common::harness::data::fresh_seed());
    let hidden = staff.join("hidden.txt");
    std::fs::write(&hidden, format!("# {secret}\n257 129 65 1 0\n")).map_err(|e| e.to_string())?;
    std::fs::write(staff.join("elsewhere/kernel.cu"), lab("honest-slow.cu")).map_err(|e| e.to_string())?;
    let students = class(&hidden, &staff.join("elsewhere"));
    for (name, what, _, _) in &students {
        make(&subs.join(name), what).map_err(|e| format!("{}: {e}", name.to_string_lossy()))?;
    }
    let before = listing(&subs);
    let mut args: Vec<OsString> =
        ["grade-class", "04", "--perf-shape", "2048", "--timeout", "10", "--budget", "90"].map(OsString::from).to_vec();
    args.extend(["--submissions".into(), subs.clone().into(), "--out".into(), out.clone().into()]);
    args.extend(["--hidden".into(), hidden.clone().into()]);
    if !gpu {
        args.push("--no-gpu".into());
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let run =
        Command::new(exe).args(&args).current_dir(&cwd).env("TMPDIR", &tmp).output().map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
    let mut problems = Vec::new();
    if !run.status.success() {
        problems.push(format!("grade-class failed:\n{text}"));
    }
    // Nothing created outside --out, nothing changed in the submissions, no command run.
    if listing(&subs) != before {
        problems.push("the submissions folder changed".into());
    }
    for (dir, what) in [(&cwd, "the working directory"), (&tmp, "TMPDIR (scratch folders left behind)")] {
        if std::fs::read_dir(dir).map_or(true, |mut d| d.next().is_some()) {
            problems.push(format!("{what} is not empty: {:?}", listing(dir).keys().collect::<Vec<_>>()));
        }
    }
    let top: Vec<String> = std::fs::read_dir(&out)
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    let allowed = ["roster.json", "students", "cards", "staff", "ended", "class.csv", "report.html"];
    if let Some(odd) = top.iter().find(|t| !allowed.contains(&t.as_str())) {
        problems.push(format!("--out holds {odd:?}"));
    }
    let ran =
        |p: &PathBuf| p.file_name().is_some_and(|n| ["pwned", "pwned2", "pwned3"].contains(&&*n.to_string_lossy()));
    if listing(&root).keys().any(ran) || ["pwned", "pwned2", "pwned3"].iter().any(|n| cwd.join(n).exists()) {
        problems.push("a student's file name ran as a command".into());
    }
    // What students and reports see: no secret, no hidden case; the staff's records are apart.
    let mut seen = vec![out.join("class.csv"), out.join("report.html")];
    for sub in ["students", "cards"] {
        seen.extend(std::fs::read_dir(out.join(sub)).into_iter().flatten().flatten().map(|e| e.path()));
    }
    for file in &seen {
        let body = std::fs::read_to_string(file).unwrap_or_default();
        if body.contains(&secret) || body.contains("257x129x65") || body.contains("257 129 65") {
            problems.push(format!("{} shows the hidden cases", file.display()));
        }
    }
    let csv = std::fs::read_to_string(out.join("class.csv")).unwrap_or_default();
    let rows: BTreeMap<String, Vec<String>> = csv.lines().skip(1).map(|l| (fields(l)[0].clone(), fields(l))).collect();
    let roster: Value = serde_json::from_str(&std::fs::read_to_string(out.join("roster.json")).unwrap_or_default())
        .unwrap_or(Value::Null);
    let ids: BTreeMap<String, String> = roster["students"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| (s["name"].as_str().unwrap_or("").to_string(), s["id"].as_str().unwrap_or("").to_string()))
        .collect();
    if rows.len() != students.len() - 1 || csv.lines().any(|l| fields(l).len() != 8) {
        problems.push(format!("class.csv should hold {} rows of 8 fields:\n{csv}", students.len() - 1));
    }
    for (name, _, with_gpu, without) in students.iter().filter(|s| !s.2.is_empty()) {
        let shown = grader::submission::printable(name);
        let want = if gpu { with_gpu } else { without };
        let row = ids.get(&shown).and_then(|id| rows.get(id));
        match row {
            Some(r) if r[6] == *want && (r[6] == "passed" || r[6].starts_with("compiles") || !r[7].is_empty()) => {}
            other => problems.push(format!("{shown:?}: expected {want:?} with a reason, got {other:?}")),
        }
        if gpu && *want == "passed" {
            let score: f64 = row.and_then(|r| r[2].parse().ok()).unwrap_or(0.0);
            if !(65.0..=75.0).contains(&score) {
                problems.push(format!("{shown:?}: the honest slow kernel scored {score}"));
            }
        }
    }
    let page = std::fs::read_to_string(out.join("report.html")).unwrap_or_default();
    if page.contains("<img src") || page.contains("<b>_1002") || !page.contains("&lt;img src=x") {
        problems.push("report.html does not escape the names".into());
    }
    if !gpu && !page.contains(grader::class::NO_GPU_NOTE) {
        problems.push("report.html does not say the grading ran without a GPU".into());
    }
    if !csv.contains("\"'=1+1.cu\"") || !csv.contains("\"'-rf.cu\"") {
        problems.push("class.csv lets a name start a formula".into());
    }
    if gpu {
        let id = ids.get("printf-hidden.cu").cloned().unwrap_or_default();
        let staff = std::fs::read_to_string(out.join("staff").join(format!("{id}.txt"))).unwrap_or_default();
        let card = std::fs::read_to_string(out.join("students").join(format!("{id}.json"))).unwrap_or_default();
        if !staff.contains("CASE 257 129 65") || !card.contains("CASE 33 31 32") {
            problems.push("the printing kernel's output is not split between the card and the staff's record".into());
        }
    }
    if problems.is_empty() {
        let _ = std::fs::remove_dir_all(&root);
        println!(
            "CLASS | {} students, hostile names and files | {} |",
            students.len() - 1,
            if gpu { "gpu" } else { "no-gpu" }
        );
        Ok(())
    } else {
        Err(format!(
            "{}\n--- class.csv:\n{csv}\n--- output:\n{text}\n(left in {})",
            problems.join("\n"),
            root.display()
        )
        .into())
    }
}
