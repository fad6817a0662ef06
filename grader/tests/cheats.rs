//! The grader against hostile submissions: every kernel of `labs/cheats/` is graded as a step 4
//! submission and must get no more than the score its header states (`// expect: ...`), the
//! broken kernels of `labs/broken/` must be caught, and no card may hold a byte of a file the
//! submission does not own: each grading runs beside a hidden-cases file and with an
//! environment that carry a fresh secret, which must appear nowhere in the card or the output.
//!
//! Kernels marked `// needs: nvrtc` are graded with `--no-gpu` (compile stage only: CI runs
//! them); `// needs: gpu` ones run where there is a GPU and are ignored elsewhere. The test
//! binary is its own grader: the children the grader starts are this binary again.

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use std::process::{Command, ExitCode};

/// What a kernel's header says a correct grader gives it.
#[derive(Debug, Default)]
struct Expect {
    max: Option<f64>,
    min: Option<f64>,
    refused: bool,
    note: Option<String>,
    stopped: Option<String>,
    gpu: bool,
    args: Vec<String>,
}

fn quoted(text: &str) -> Option<String> {
    text.split('"').nth(1).map(str::to_string)
}

fn expectations(source: &str, broken: bool) -> Result<Expect, String> {
    let mut e = Expect { gpu: broken, ..Expect::default() };
    if broken {
        // A broken kernel is caught: it fails at least one case, so it cannot reach 70.
        e.max = Some(69.9);
    }
    for line in source.lines().take_while(|l| l.starts_with("//")) {
        let line = line.trim_start_matches("//").trim();
        if let Some(rest) = line.strip_prefix("expect:") {
            let rest = rest.trim();
            let number = |s: &str| s.trim().parse::<f64>().map_err(|_| format!("bad expectation {line:?}"));
            if let Some(v) = rest.strip_prefix("score <=") {
                e.max = Some(number(v)?);
            } else if let Some(v) = rest.strip_prefix("score >=") {
                e.min = Some(number(v)?);
            } else if rest == "refused" {
                e.refused = true;
                e.max = Some(0.0);
            } else if rest.starts_with("note") {
                e.note = quoted(rest);
            } else if rest.starts_with("stopped") {
                e.stopped = quoted(rest);
            } else {
                return Err(format!("unknown expectation {line:?}"));
            }
        } else if let Some(rest) = line.strip_prefix("needs:") {
            e.gpu = rest.trim() == "gpu";
        } else if let Some(rest) = line.strip_prefix("grade:") {
            e.args = rest.split_whitespace().map(str::to_string).collect();
        }
    }
    if e.max.is_none() && !e.refused {
        return Err("no `// expect: score <= N` or `// expect: refused` line".into());
    }
    Ok(e)
}

fn grade(name: &str, source: &str, e: &Expect) -> Result<(), Failed> {
    let work = std::env::temp_dir().join(format!("cheat-{}-{}", std::process::id(), name.trim_end_matches(".cu")));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|x| x.to_string())?;
    let secret = format!("SECRET{:016x}", common::data::fresh_seed());
    // The hidden cases carry the secret in a comment; the environment carries another.
    std::fs::write(work.join("hidden.txt"), format!("# {secret}\n257 129 65 1 0\n")).map_err(|x| x.to_string())?;
    std::fs::write(work.join(name), source).map_err(|x| x.to_string())?;
    let mut args: Vec<String> =
        ["grade", "04", name, "--hidden", "hidden.txt", "--json", "card.json"].map(String::from).to_vec();
    let defaults = ["--perf-shape", "2048", "--timeout", "10"];
    for pair in defaults.chunks(2) {
        if !e.args.iter().any(|a| a == pair[0]) {
            args.extend(pair.iter().map(|s| s.to_string()));
        }
    }
    args.extend(e.args.iter().cloned());
    if !e.gpu {
        args.push("--no-gpu".into());
    }
    let exe = std::env::current_exe().map_err(|x| x.to_string())?;
    let started = std::time::Instant::now();
    let out = Command::new(exe).args(&args).current_dir(&work).env("GRADER_TEST_SECRET", &secret).output();
    let out = out.map_err(|x| x.to_string())?;
    let seconds = started.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let card_text = std::fs::read_to_string(work.join("card.json")).map_err(|x| format!("no card ({x}):\n{text}"))?;
    let _ = std::fs::remove_dir_all(&work);
    let card: Value = serde_json::from_str(&card_text).map_err(|x| x.to_string())?;
    let score = card["score"].as_f64().ok_or("no score")?;
    let first_failure = card["tests"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["max_score"].as_f64() > Some(0.0) && t["score"] == 0.0))
        .map(|t| format!("{}: {}", t["name"].as_str().unwrap_or(""), t["output"].as_str().unwrap_or("")))
        .unwrap_or_default();
    println!(
        "CHEAT | {name} | {} | {score:.1} | {} | {seconds:.1} |",
        expected_text(e),
        first_failure.lines().next().unwrap_or(card["speed_note"].as_str().unwrap_or("")).replace('|', "/")
    );
    let mut problems = Vec::new();
    if text.contains(&secret) || card_text.contains(&secret) {
        problems.push(
            "the card or the output holds the secret of a file (or environment) the submission does not own"
                .to_string(),
        );
    }
    if let Some(max) = e.max.filter(|m| score > *m) {
        problems.push(format!("scored {score:.1}, more than {max}"));
    }
    if let Some(min) = e.min.filter(|m| score < *m) {
        problems.push(format!("scored {score:.1}, less than {min} (the baseline is wrong)"));
    }
    if e.refused {
        let first = &card["tests"][0];
        let refusal = first["name"] == "include policy" || (first["name"] == "compile" && first["score"] == 0.0);
        if !refusal || !out.status.success() {
            problems.push("not refused at the include policy or the compile".into());
        }
    }
    if let Some(note) = &e.note {
        if !card_text.contains(note.as_str()) {
            problems.push(format!("the card does not say {note:?}"));
        }
    }
    if let Some(stopped) = &e.stopped {
        if card["stopped"].as_str() != Some(stopped.as_str()) {
            problems.push(format!("not stopped with {stopped:?} (stopped: {})", card["stopped"]));
        }
    }
    let budget = e
        .args
        .iter()
        .position(|a| a == "--budget")
        .and_then(|i| e.args.get(i + 1))
        .map_or(120.0, |b| b.parse().unwrap_or(120.0));
    if seconds > budget + 15.0 {
        problems.push(format!("graded in {seconds:.0} s, over its budget of {budget} s"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n--- card:\n{card_text}\n--- output:\n{text}", problems.join("; ")).into())
    }
}

fn expected_text(e: &Expect) -> String {
    if e.refused {
        return "refused (0)".into();
    }
    let mut parts = Vec::new();
    if let Some(m) = e.min {
        parts.push(format!(">= {m}"));
    }
    if let Some(m) = e.max {
        parts.push(format!("<= {m}"));
    }
    parts.join(", ")
}

fn main() -> ExitCode {
    if let Some(code) = grader::dispatch() {
        return code;
    }
    common::cli::program_start();
    let mut args = Arguments::from_args();
    args.test_threads.get_or_insert(1);
    let nvrtc = common::device::nvrtc_present();
    let gpu = common::device::Gpu::shared();
    if let Err(why) = &gpu {
        eprintln!("note: the GPU cheats are ignored: {why}");
    }
    if !nvrtc {
        eprintln!("note: the cheats are ignored: {}", common::Error::NoNvrtc);
    }
    let mut trials = Vec::new();
    for &(folder, name, source) in grader::labs::LAB_KERNELS {
        let broken = folder.starts_with("labs/broken");
        let expect = expectations(source, broken);
        let needs_gpu = expect.as_ref().is_ok_and(|e| e.gpu);
        let trial = Trial::test(format!("{folder}/{name}"), move || grade(name, source, &expect?))
            .with_kind(if needs_gpu { "gpu" } else { "nvrtc" })
            .with_ignored_flag(!nvrtc || (needs_gpu && gpu.is_err()));
        trials.push(trial);
    }
    libtest_mimic::run(&args, trials).exit_code()
}
