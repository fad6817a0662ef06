//! Grading a class on a Slurm cluster: a job array, one task per student (a GPU each), each task
//! the grader's `grade-class-task` on its student; what a task left behind is collected later.
//! A task that failed, timed out or lost its node is recorded as such, from `sacct` where the
//! cluster keeps accounting and from the task's log (where Slurm writes why it killed it)
//! otherwise, and can be submitted again alone (`--slurm --only ID`).

use super::args::ClassArgs;
use super::folders::{card_path, ended_path, load_roster};
use super::roster::Entry;
use crate::report::write_atomically;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A string as one shell word: single-quoted, quotes inside escaped.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Indices as Slurm's array syntax: `0-3,7,9-10`.
pub fn array_spec(indices: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < indices.len() {
        let mut j = i;
        while j + 1 < indices.len() && indices[j + 1] == indices[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { indices[i].to_string() } else { format!("{}-{}", indices[i], indices[j]) });
        i = j + 1;
    }
    parts.join(",")
}

/// The job script for `indices` of the roster.
pub fn script(a: &ClassArgs, out: &Path, exe: &Path, indices: &[usize]) -> Result<String, String> {
    // The task's wall time: the submission's budget, the process starts, a margin.
    let minutes = (a.budget + 120).div_ceil(60);
    let mut s = format!(
        "#!/bin/bash\n#SBATCH --job-name=grade-{}\n#SBATCH --array={}%{}\n#SBATCH --output={}/slurm/logs/task-%a.log\n\
         #SBATCH --time={minutes}\n#SBATCH --cpus-per-task=2\n",
        a.step.name,
        array_spec(indices),
        a.throttle,
        out.display()
    );
    if !a.no_gpu {
        s += "#SBATCH --gres=gpu:1\n";
    }
    for option in &a.sbatch {
        if option.contains('\n') || !option.starts_with('-') {
            return Err(format!("--sbatch {option:?} is not one sbatch option"));
        }
        s += &format!("#SBATCH {option}\n");
    }
    s += &format!(
        "exec {} grade-class-task {} \"$SLURM_ARRAY_TASK_ID\"\n",
        shell_quote(&exe.display().to_string()),
        shell_quote(&out.display().to_string())
    );
    Ok(s)
}

/// What a task needs to grade as `grade-class` was asked to, kept in `slurm/task.json`.
fn save_task_args(a: &ClassArgs, out: &Path) -> Result<(), String> {
    let v = json!({
        "step": a.step.id(), "hidden": a.hidden, "timeout": a.timeout, "budget": a.budget,
        "perf_shape": a.perf_shape.to_string(), "no_gpu": a.no_gpu,
    });
    write_atomically(&out.join("slurm").join("task.json"), &v)
}

pub fn task_args(out: &Path) -> Result<ClassArgs, String> {
    let path = out.join("slurm").join("task.json");
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?)
            .map_err(|e| e.to_string())?;
    let bad = || format!("{}: malformed", path.display());
    Ok(ClassArgs {
        step: crate::step_key(v["step"].as_str().ok_or_else(bad)?)?,
        submissions: None,
        out: out.to_path_buf(),
        hidden: v["hidden"].as_str().map(PathBuf::from),
        timeout: v["timeout"].as_u64().ok_or_else(bad)?,
        budget: v["budget"].as_u64().ok_or_else(bad)?,
        perf_shape: crate::shape(v["perf_shape"].as_str().ok_or_else(bad)?)?,
        no_gpu: v["no_gpu"].as_bool().unwrap_or(false),
        gpus: Vec::new(),
        regrade: false,
        only: Vec::new(),
        slurm: false,
        throttle: 1,
        sbatch: Vec::new(),
        collect: false,
    })
}

/// Writes the job script and submits it; prints the job id and how to collect.
pub fn submit(a: &ClassArgs, indices: &[usize], roster: &[Entry]) -> Result<(), String> {
    if indices.is_empty() {
        println!("nothing to grade: every student has a card (--regrade to grade again)");
        return Ok(());
    }
    let out = std::fs::canonicalize(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
    let dir = out.join("slurm");
    std::fs::create_dir_all(dir.join("logs")).map_err(|e| e.to_string())?;
    // A task graded again starts without its old card, log and marker.
    for &i in indices {
        let id = &roster[i].id;
        let _ = std::fs::remove_file(card_path(&out, id));
        let _ = std::fs::remove_file(ended_path(&out, id));
        let _ = std::fs::remove_file(dir.join("logs").join(format!("task-{i}.log")));
    }
    let mut a = a.clone();
    if let Some(h) = &a.hidden {
        a.hidden = Some(std::fs::canonicalize(h).map_err(|e| format!("{}: {e}", h.display()))?);
    }
    save_task_args(&a, &out)?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let job = dir.join("job.sh");
    std::fs::write(&job, script(&a, &out, &exe, indices)?).map_err(|e| e.to_string())?;
    let output = Command::new("sbatch")
        .arg("--parsable")
        .arg(&job)
        .output()
        .map_err(|e| format!("cannot run sbatch ({e}): is this a Slurm login node?"))?;
    if !output.status.success() {
        return Err(format!("sbatch refused the job: {}", String::from_utf8_lossy(&output.stderr).trim()));
    }
    let id = String::from_utf8_lossy(&output.stdout).trim().split(';').next().unwrap_or("").to_string();
    let mut jobs = std::fs::read_to_string(dir.join("jobs.txt")).unwrap_or_default();
    jobs += &format!("{id} {}\n", array_spec(indices));
    std::fs::write(dir.join("jobs.txt"), jobs).map_err(|e| e.to_string())?;
    println!(
        "submitted job array {id} ({} tasks); when it has finished: grade-class {} --out {} --collect",
        indices.len(),
        a.step.id(),
        out.display()
    );
    println!("job {id}");
    Ok(())
}

/// What Slurm knows of each task, by roster index: `sacct`'s state where accounting is kept.
#[derive(Default)]
pub struct States {
    sacct: HashMap<usize, String>,
}

impl States {
    pub fn query(out: &Path) -> States {
        let mut sacct = HashMap::new();
        let jobs = std::fs::read_to_string(out.join("slurm").join("jobs.txt")).unwrap_or_default();
        for job in jobs.lines().filter_map(|l| l.split_whitespace().next()) {
            let Ok(o) = Command::new("sacct").args(["-j", job, "-n", "-P", "-X", "-o", "JobID,State"]).output() else {
                continue;
            };
            for line in String::from_utf8_lossy(&o.stdout).lines() {
                let mut f = line.split('|');
                let (Some(jid), Some(state)) = (f.next(), f.next()) else { continue };
                if let Some(index) = jid.split('_').nth(1).and_then(|i| i.parse::<usize>().ok()) {
                    sacct.insert(index, state.split_whitespace().next().unwrap_or(state).to_string());
                }
            }
        }
        States { sacct }
    }

    /// Why a student has no card. Slurm's end of the task comes first: a task cancelled or
    /// timed out while its `grade` ran may still record that `grade` failed, as a consequence.
    pub fn why_missing(&self, id: &str, out: &Path) -> String {
        let dir = out.join("slurm");
        let index = load_roster(out).ok().and_then(|r| r.iter().position(|e| e.id == id));
        let log = index.and_then(|i| std::fs::read_to_string(dir.join("logs").join(format!("task-{i}.log"))).ok());
        let state = index.and_then(|i| self.sacct.get(&i).cloned());
        // The task's own record of how its `grade` ended.
        let ended = || {
            let text = std::fs::read_to_string(ended_path(out, id)).ok()?;
            let v = serde_json::from_str::<Value>(&text).ok()?;
            Some(format!("not graded: {}", v["ended"].as_str().unwrap_or("no card")))
        };
        match (state.as_deref(), log.as_deref()) {
            (Some("TIMEOUT"), _) => "task timed out (Slurm's time limit)".into(),
            (Some("NODE_FAIL"), _) => "task lost its node".into(),
            (Some("CANCELLED"), _) => "task cancelled".into(),
            (Some("OUT_OF_MEMORY"), _) => "task ran out of memory".into(),
            (_, Some(l)) if l.contains("DUE TO TIME LIMIT") => "task timed out (Slurm's time limit)".into(),
            (_, Some(l)) if l.contains("NODE FAIL") || l.contains("DUE TO NODE") => "task lost its node".into(),
            (_, Some(l)) if l.contains("CANCELLED") => "task cancelled".into(),
            (state, log) => ended().unwrap_or_else(|| match (state, log) {
                (Some(s), _) if s == "PENDING" || s == "RUNNING" => format!("task not finished ({})", s.to_lowercase()),
                (Some(s), _) => format!("task ended without a card ({s})"),
                (None, Some(_)) => "task ended without a card (see its log)".into(),
                (None, None) => "not graded (no task ran for it)".into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_and_quotes() {
        assert_eq!(array_spec(&[0, 1, 2, 3, 7, 9, 10]), "0-3,7,9-10");
        assert_eq!(array_spec(&[4]), "4");
        assert_eq!(shell_quote("/a b/it's"), "'/a b/it'\\''s'");
    }

    #[test]
    fn the_script_asks_for_a_gpu_a_throttle_and_a_time() {
        let a = task_args_for_test();
        let s = script(&a, Path::new("/o ut"), Path::new("/b/grader"), &[0, 1, 2]).unwrap();
        assert!(s.contains("#SBATCH --array=0-2%16\n") && s.contains("#SBATCH --gres=gpu:1\n"), "{s}");
        assert!(s.contains("#SBATCH --time=4\n") && s.contains("#SBATCH --partition=gpu\n"), "{s}");
        assert!(s.ends_with("exec '/b/grader' grade-class-task '/o ut' \"$SLURM_ARRAY_TASK_ID\"\n"), "{s}");
        let bad = ClassArgs { sbatch: vec!["--x\n#SBATCH --y".into()], ..a };
        assert!(script(&bad, Path::new("/o"), Path::new("/g"), &[0]).is_err());
    }

    fn task_args_for_test() -> ClassArgs {
        ClassArgs {
            step: crate::step_key("04").unwrap(),
            submissions: None,
            out: PathBuf::from("/o"),
            hidden: None,
            timeout: 30,
            budget: 120,
            perf_shape: common::Shape::cube(4096),
            no_gpu: false,
            gpus: Vec::new(),
            regrade: false,
            only: Vec::new(),
            slurm: true,
            throttle: 16,
            sbatch: vec!["--partition=gpu".into()],
            collect: false,
        }
    }
}
