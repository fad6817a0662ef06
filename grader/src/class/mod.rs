//! `grade-class`: a folder of submissions, each graded by `grade` in a process of its own (the
//! same protections and budget), on every GPU of this machine or as a Slurm job array; then one
//! JSON per student, a class CSV and an HTML report.
//!
//! The output folder holds `roster.json` (the students, in a fixed order: a Slurm task's index is
//! its position), `students/<id>.json` (each card, written atomically by `grade`),
//! `cards/<id>.txt` (the card as printed), `staff/<id>.txt` (the staff's record: hidden cases,
//! whole compile logs; never for students), `ended/<id>.json` (how each student's `grade` ended),
//! `class.csv`, `report.html`, and for Slurm `slurm/` (the job script, its logs, the job id).
//! Nothing is written outside it (`folders.rs` names the paths; `args.rs` holds the options).

mod args;
mod csv;
mod folders;
mod html;
mod roster;
mod slurm;

use crate::report::write_atomically;
pub use args::ClassArgs;
use folders::{FOLDERS, card_path, ended_path, load_roster, staff_path};
pub use html::NO_GPU as NO_GPU_NOTE;
use roster::Entry;
use serde_json::{Value, json};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The `grade` arguments every student gets: the options, then `--`, the step and the file (a
/// file name is never read as an option).
fn grade_args(a: &ClassArgs, file: &Path, id: &str) -> Vec<OsString> {
    let mut v: Vec<OsString> = vec!["grade".into(), "--json".into(), card_path(&a.out, id).into()];
    v.extend(["--staff".into(), staff_path(&a.out, id).into()]);
    for (flag, value) in [
        ("--timeout", a.timeout.to_string()),
        ("--budget", a.budget.to_string()),
        ("--perf-shape", a.perf_shape.to_string()),
    ] {
        v.extend([flag.into(), value.into()]);
    }
    if let Some(h) = &a.hidden {
        v.extend(["--hidden".into(), h.clone().into()]);
    }
    if a.no_gpu {
        v.push("--no-gpu".into());
    }
    v.extend(["--".into(), a.step.id().into(), file.into()]);
    v
}

/// Grades one student in a child process (`grade`), its printed card kept in `cards/` and how it
/// ended in `ended/`: a `grade` that wrote no card failed for a reason of the machine's.
fn grade_one(a: &ClassArgs, entry: &Entry, gpu: Option<usize>) -> Result<(), String> {
    let result = run_grade(a, entry, gpu);
    let v = match &result {
        Ok(()) => json!({ "ended": "graded" }),
        Err(why) => json!({ "ended": why }),
    };
    write_atomically(&ended_path(&a.out, &entry.id), &v)?;
    result
}

fn run_grade(a: &ClassArgs, entry: &Entry, gpu: Option<usize>) -> Result<(), String> {
    let out = &a.out;
    let file = entry.file.as_ref().map_err(Clone::clone)?;
    let card = card_path(out, &entry.id);
    let _ = std::fs::remove_file(&card);
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(exe);
    cmd.args(grade_args(a, file, &entry.id));
    if let Some(g) = gpu {
        cmd.env("SGEMM_DEVICE", g.to_string());
    }
    let output = cmd.output().map_err(|e| format!("cannot start grade: {e}"))?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    std::fs::write(out.join("cards").join(format!("{}.txt", entry.id)), &text).map_err(|e| e.to_string())?;
    if !output.status.success() || !card.exists() {
        // `grade` refused before it could write a card (a machine problem): say so.
        let why = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("grade failed");
        return Err(why.trim_start_matches("error: ").to_string());
    }
    Ok(())
}

/// What grading here needs of the machine, checked before any student is graded: NVRTC, and for
/// a GPU grading the GPUs and cuBLAS (without opening a context: each `grade` opens its own).
fn preflight(a: &ClassArgs) -> Result<(), String> {
    if !common::harness::device::nvrtc_present() {
        return Err(common::Error::NoNvrtc.to_string());
    }
    if !a.no_gpu {
        gpus(a)?;
        if !common::harness::device::cublas_present() {
            return Err(common::Error::NoCublas.to_string());
        }
    }
    Ok(())
}

/// The GPUs to use: those asked for, or every one the driver sees.
fn gpus(a: &ClassArgs) -> Result<Vec<usize>, String> {
    if !common::harness::device::driver_present() {
        return Err(common::Error::NoDriver.to_string());
    }
    let n = cudarc::driver::CudaContext::device_count().map_err(|e| format!("no usable NVIDIA GPU: {e}"))?;
    if n < 1 {
        return Err("the driver sees no GPU".into());
    }
    if let Some(g) = a.gpus.iter().find(|&&g| g >= n as usize) {
        return Err(format!("--gpus names GPU {g}, but this machine has {n}"));
    }
    if !a.gpus.is_empty() {
        return Ok(a.gpus.clone());
    }
    Ok((0..n as usize).collect())
}

/// Prints progress on stderr: a bar on a terminal, a line per student otherwise.
struct Progress {
    total: usize,
    done: usize,
    started: Instant,
    tty: bool,
}

impl Progress {
    fn tick(&mut self, id: &str) {
        self.done += 1;
        let elapsed = self.started.elapsed().as_secs_f64();
        let left = elapsed / self.done as f64 * (self.total - self.done) as f64;
        let left = format!("{}m{:02}s left", (left / 60.0) as u64, (left % 60.0) as u64);
        let mut err = std::io::stderr().lock();
        if self.tty {
            let width = 30;
            let filled = width * self.done / self.total.max(1);
            let _ = write!(
                err,
                "\r[{}{}] {}/{} graded, {left}   ",
                "#".repeat(filled),
                ".".repeat(width - filled),
                self.done,
                self.total
            );
            if self.done == self.total {
                let _ = writeln!(err);
            }
        } else {
            let _ = writeln!(err, "graded {id} ({}/{}, {left})", self.done, self.total);
        }
    }
}

/// Grades `todo` here: one worker per GPU (or per two CPU cores without a GPU); the students
/// left without a card, and why.
fn grade_here(a: &ClassArgs, todo: Vec<Entry>) -> Result<Vec<(String, String)>, String> {
    let workers: Vec<Option<usize>> = if a.no_gpu {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        vec![None; (cores / 2).max(1)]
    } else {
        gpus(a)?.into_iter().map(Some).collect()
    };
    let queue = Arc::new(Mutex::new(todo.clone()));
    let use_tty = unsafe { libc::isatty(2) } == 1;
    let progress = Arc::new(Mutex::new(Progress { total: todo.len(), done: 0, started: Instant::now(), tty: use_tty }));
    let failures = Arc::new(Mutex::new(Vec::new()));
    std::thread::scope(|s| {
        for gpu in workers {
            let (queue, progress, failures) = (queue.clone(), progress.clone(), failures.clone());
            s.spawn(move || {
                loop {
                    let Some(entry) = queue.lock().unwrap_or_else(|p| p.into_inner()).pop() else { break };
                    if let Err(why) = grade_one(a, &entry, gpu) {
                        failures.lock().unwrap_or_else(|p| p.into_inner()).push((entry.id.clone(), why));
                    }
                    progress.lock().unwrap_or_else(|p| p.into_inner()).tick(&entry.id);
                }
            });
        }
    });
    let failures = failures.lock().unwrap_or_else(|p| p.into_inner()).clone();
    Ok(failures)
}

/// Each student's result: the card, or why there is none.
pub fn results(out: &Path, roster: &[Entry], slurm_states: &slurm::States) -> Vec<(Entry, Result<Value, String>)> {
    roster
        .iter()
        .map(|e| {
            let card = card_path(out, &e.id);
            let result = match (&e.file, std::fs::read_to_string(&card)) {
                (Err(why), _) => Err(why.clone()),
                (Ok(_), Ok(text)) => serde_json::from_str(&text).map_err(|x| format!("unreadable card: {x}")),
                (Ok(_), Err(_)) => Err(slurm_states.why_missing(&e.id, out)),
            };
            (e.clone(), result)
        })
        .collect()
}

/// Writes `class.csv` and `report.html` from the cards in `out`. The same cards give the same
/// files, byte for byte.
fn write_reports(a: &ClassArgs, roster: &[Entry], states: &slurm::States) -> Result<(), String> {
    let results = results(&a.out, roster, states);
    std::fs::write(a.out.join("class.csv"), csv::class_csv(&results)).map_err(|e| e.to_string())?;
    let page = html::report(&a.step.id(), &results);
    std::fs::write(a.out.join("report.html"), page).map_err(|e| e.to_string())?;
    let no_gpu = results.iter().any(|(_, r)| r.as_ref().is_ok_and(|c| c["mode"] == "no-gpu"));
    println!(
        "{} students: {} graded{}; class.csv and report.html in {}",
        results.len(),
        results.iter().filter(|(_, r)| r.is_ok()).count(),
        if no_gpu { " without a GPU (the compile stage only: the scores are not grades)" } else { "" },
        a.out.display()
    );
    Ok(())
}

pub fn grade_class(a: ClassArgs) -> Result<(), String> {
    crate::handout::refuse_inside_handout()?;
    // A machine that cannot grade stops here, before any student is scored; Slurm's nodes are
    // checked by each task (a task without NVRTC records why, and its student is not scored).
    if !a.collect && !a.slurm {
        preflight(&a)?;
    }
    if a.collect {
        let roster = load_roster(&a.out)?;
        let states = slurm::States::query(&a.out);
        return write_reports(&a, &roster, &states);
    }
    let roster = match &a.submissions {
        Some(dir) => {
            let r = roster::discover(dir)?;
            std::fs::create_dir_all(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
            let list: Vec<Value> = r.iter().map(Entry::to_json).collect();
            write_atomically(&a.out.join("roster.json"), &json!({ "step": a.step.id(), "students": list }))?;
            r
        }
        None => load_roster(&a.out)?,
    };
    for sub in FOLDERS {
        std::fs::create_dir_all(a.out.join(sub)).map_err(|e| format!("{}: {e}", a.out.display()))?;
    }
    let todo: Vec<Entry> = roster
        .iter()
        .filter(|e| a.only.is_empty() || a.only.contains(&e.id))
        .filter(|e| e.file.is_ok())
        .filter(|e| a.regrade || !a.only.is_empty() || !card_path(&a.out, &e.id).exists())
        .cloned()
        .collect();
    if a.slurm {
        let indices: Vec<usize> = todo.iter().filter_map(|t| roster.iter().position(|e| e.id == t.id)).collect();
        return slurm::submit(&a, &indices, &roster);
    }
    let failed = grade_here(&a, todo)?;
    write_reports(&a, &roster, &slurm::States::default())?;
    match failed.first() {
        None => Ok(()),
        Some((id, why)) => Err(format!(
            "{} students were not graded, for a reason of the machine's (first: {id}: {why}); their rows say \
             \"not graded\": run grade-class again when it is fixed (students with a card are kept)",
            failed.len()
        )),
    }
}

/// `grade-class-task OUT INDEX`: one task of a Slurm job array grades the student at INDEX.
#[derive(clap::Args, Debug)]
pub struct TaskArgs {
    pub out: PathBuf,
    pub index: usize,
}

pub fn grade_task(t: TaskArgs) -> Result<(), String> {
    let roster = load_roster(&t.out)?;
    let entry = roster.get(t.index).ok_or(format!("no student at index {}", t.index))?;
    let args: ClassArgs = slurm::task_args(&t.out)?;
    grade_one(&args, entry, None)
}
