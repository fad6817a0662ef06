//! The grader against hostile submissions: every kernel of `labs/cheats/` is graded as a step 4
//! submission and must get no more than the score its header states (`// expect: ...`), the
//! broken kernels of `labs/broken/<step>/` (step 14's an FP8 kernel) must be caught as that step's, and no card may hold a byte of a file the
//! submission does not own, nor a hidden case's shape: each grading runs beside a hidden-cases
//! file and with an environment that carry a fresh secret, which must appear nowhere in the card
//! or the output, and the hidden case (257x129x65) must appear only in the staff's record.
//! Beside the kernels, fixtures made here: files no source tree can carry or no `.cu` can be (a
//! link to the hidden cases, a FIFO, a folder, bytes that are not UTF-8, a NUL, nothing, a file
//! over the size limit, a name that reads as an option).
//!
//! And a class of all of these under hostile names, graded by `grade-class` ([`class`]).
//!
//! Kernels marked `// needs: nvrtc` are graded with `--no-gpu` (compile stage only: CI runs
//! them); `// needs: gpu` ones run where there is a GPU and are ignored elsewhere; the fixtures
//! and the class run everywhere, with the GPU where there is one. The test binary is its own
//! grader: the children the grader starts are this binary again.

#[path = "cheats/class.rs"]
mod class;

use common::harness::{data, device, names};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, ExitCode};

/// The hidden case every grading gets, as the kernel and the card would write it.
const HIDDEN: &str = "257 129 65 1 0";
const HIDDEN_SHAPES: [&str; 2] = ["257x129x65", "257 129 65"];

/// What a kernel's header says a correct grader gives it.
#[derive(Debug, Default)]
struct Expect {
    max: Option<f64>,
    min: Option<f64>,
    refused: bool,
    note: Option<String>,
    stopped: Option<String>,
    /// A text the staff's record holds (and the card must not).
    staff: Option<String>,
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
            } else if rest.starts_with("staff") {
                e.staff = quoted(rest);
            } else {
                return Err(format!("unknown expectation {line:?}"));
            }
        } else if let Some(rest) = line.strip_prefix("needs:") {
            e.gpu = rest.trim() == "gpu";
        } else if let Some(rest) = line.strip_prefix("grade:") {
            e.args = rest.split_whitespace().map(str::to_string).collect();
        }
    }
    if e.max.is_none() && !e.refused && e.note.is_none() {
        return Err("no `// expect: score <= N`, `// expect: refused` or `// expect: note` line".into());
    }
    Ok(e)
}

/// Puts the submission in place in the grading's folder (a file, a link, a FIFO, ...).
type Make = Box<dyn Fn(&Path, &Path) -> std::io::Result<()> + Send>;

fn grade(step: &str, name: &OsStr, make: &Make, e: &Expect) -> Result<(), Failed> {
    let label = name.to_string_lossy().into_owned();
    let work = std::env::temp_dir().join(format!("cheat-{}-{}", std::process::id(), names::slug(&label, &[])));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|x| x.to_string())?;
    let secret = format!("SECRET{:016x}", data::fresh_seed());
    // The hidden cases carry the secret in a comment; the environment carries another.
    std::fs::write(work.join("hidden.txt"), format!("# {secret}\n{HIDDEN}\n")).map_err(|x| x.to_string())?;
    make(&work.join(name), &work.join("hidden.txt")).map_err(|x| format!("cannot make {label}: {x}"))?;
    let mut args: Vec<OsString> =
        ["grade", "--hidden", "hidden.txt", "--json", "card.json", "--staff", "staff.txt"].map(OsString::from).to_vec();
    let defaults = ["--perf-shape", "2048", "--timeout", "10"];
    for pair in defaults.chunks(2) {
        if !e.args.iter().any(|a| a == pair[0]) {
            args.extend(pair.iter().map(OsString::from));
        }
    }
    args.extend(e.args.iter().map(OsString::from));
    if !e.gpu {
        args.push("--no-gpu".into());
    }
    args.extend(["--".into(), step.into(), name.to_os_string()]);
    let exe = std::env::current_exe().map_err(|x| x.to_string())?;
    let started = std::time::Instant::now();
    let out = Command::new(exe).args(&args).current_dir(&work).env("GRADER_TEST_SECRET", &secret).output();
    let out = out.map_err(|x| x.to_string())?;
    let seconds = started.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let card_text = std::fs::read_to_string(work.join("card.json")).map_err(|x| format!("no card ({x}):\n{text}"))?;
    let staff = std::fs::read_to_string(work.join("staff.txt")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&work);
    let card: Value = serde_json::from_str(&card_text).map_err(|x| x.to_string())?;
    let score = card["score"].as_f64().ok_or("no score")?;
    let scored_failures: Vec<&Value> = card["tests"]
        .as_array()
        .map(|t| t.iter().filter(|t| t["max_score"].as_f64() > Some(0.0) && t["score"] == 0.0).collect())
        .unwrap_or_default();
    let first_failure = scored_failures
        .first()
        .map(|t| format!("{}: {}", t["name"].as_str().unwrap_or(""), t["output"].as_str().unwrap_or("")))
        .unwrap_or_default();
    println!(
        "CHEAT | {label} | {} | {score:.1} | {} | {seconds:.1} |",
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
    if HIDDEN_SHAPES.iter().any(|h| text.contains(h) || card_text.contains(h)) {
        problems.push("the card or the output shows the hidden case".to_string());
    }
    if let Some(max) = e.max.filter(|m| score > *m) {
        problems.push(format!("scored {score:.1}, more than {max}"));
    }
    if let Some(min) = e.min.filter(|m| score < *m) {
        problems.push(format!("scored {score:.1}, less than {min} (the baseline is wrong)"));
    }
    if e.refused {
        let first = &card["tests"][0]["name"];
        let refusal = ["submission", "include policy", "compile"].iter().any(|n| first == n);
        if !refusal || scored_failures.len() != 1 || !out.status.success() {
            problems.push("not refused with one failure (the submission, the include policy or the compile)".into());
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
    if let Some(wanted) = &e.staff {
        if !staff.contains(wanted.as_str()) || card_text.contains(wanted.as_str()) {
            problems.push(format!("the staff's record, and not the card, should hold {wanted:?}"));
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
        Err(format!("{}\n--- card:\n{card_text}\n--- output:\n{text}\n--- staff:\n{staff}", problems.join("; ")).into())
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
    if let Some(n) = &e.note {
        parts.push(format!("says {n:?}"));
    }
    parts.join(", ")
}

/// Makes a FIFO at `path`.
fn fifo(path: &Path) -> std::io::Result<()> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: makes a FIFO at a path in the test's own folder.
    match unsafe { libc::mkfifo(c.as_ptr(), 0o600) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// A kernel of `labs/cheats/`, embedded (`honest-slow.cu` is the base of the fixtures).
fn lab(name: &str) -> &'static str {
    grader::labs::LAB_KERNELS.iter().find(|k| k.1 == name).map_or("", |k| k.2)
}

/// Files as a submission system may export them, made at the test's run: (name, how to make it,
/// what the grader gives it).
fn fixtures(gpu: bool) -> Vec<(OsString, Make, Expect)> {
    let refused = |note: &str| Expect { refused: true, max: Some(0.0), note: Some(note.into()), ..Expect::default() };
    // An honest kernel: graded in full with a GPU, its compile without.
    let honest_expect = || match gpu {
        true => Expect { min: Some(65.0), max: Some(75.0), gpu, ..Expect::default() },
        false => Expect { note: Some("compiles for sm_90".into()), max: Some(0.0), ..Expect::default() },
    };
    let bytes = |b: Vec<u8>| -> Make { Box::new(move |path: &Path, _: &Path| std::fs::write(path, &b)) };
    let mut latin1 = lab("honest-slow.cu").as_bytes().to_vec();
    latin1.extend_from_slice(b"// caf\xe9, na\xefve: a comment in ISO-8859-1\n");
    // NVRTC reads the byte itself (a lossy reading, U+FFFD, would be three bytes).
    latin1.extend_from_slice(b"static_assert(sizeof(\"\xe9\") == 2, \"the byte reached NVRTC as it is\");\n");
    let mut nul = lab("honest-slow.cu").as_bytes().to_vec();
    nul.extend_from_slice(b"\n// a NUL: \0\n");
    let over = vec![b'/'; (1 << 20) + 1];
    vec![
        (
            "link.cu".into(),
            Box::new(|path: &Path, hidden: &Path| std::os::unix::fs::symlink(hidden, path)) as Make,
            refused("link.cu is a symbolic link"),
        ),
        ("fifo.cu".into(), Box::new(|path: &Path, _: &Path| fifo(path)), refused("fifo.cu is a FIFO")),
        (
            "dir.cu".into(),
            Box::new(|path: &Path, _: &Path| std::fs::create_dir(path)),
            refused("dir.cu is a directory"),
        ),
        ("--help.cu".into(), bytes(lab("honest-slow.cu").as_bytes().to_vec()), honest_expect()),
        ("latin1.cu".into(), bytes(latin1), honest_expect()),
        ("nul.cu".into(), bytes(nul), refused("holds a NUL byte")),
        ("empty.cu".into(), bytes(Vec::new()), refused("empty.cu is empty")),
        ("oversize.cu".into(), bytes(over), refused("is 1048577 bytes; the limit is 1048576")),
    ]
}

/// A machine without the GPU a grading needs: `grade` and `grade-class` stop with one line and a
/// non-zero exit before anyone is scored, and leave no card or report.
fn no_gpu_stops_before_scoring() -> Result<(), Failed> {
    let work = std::env::temp_dir().join(format!("cheat-machine-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("class")).map_err(|x| x.to_string())?;
    std::fs::write(work.join("class/k.cu"), lab("honest-slow.cu")).map_err(|x| x.to_string())?;
    let exe = std::env::current_exe().map_err(|x| x.to_string())?;
    let runs = [
        vec!["grade", "--json", "card.json", "--", "04", "class/k.cu"],
        vec!["grade-class", "04", "--submissions", "class", "--out", "out"],
    ];
    let mut problems = Vec::new();
    for args in runs {
        let out = Command::new(&exe).args(&args).current_dir(&work).output().map_err(|x| x.to_string())?;
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        if out.status.success() || lines.len() != 1 || !lines[0].starts_with("error: no NVIDIA driver") {
            problems.push(format!("{}: exit {}, stderr {err:?}", args[0], out.status));
        }
    }
    if work.join("card.json").exists() || work.join("out/class.csv").exists() || work.join("out/students").exists() {
        problems.push("a card or a report was written".into());
    }
    let _ = std::fs::remove_dir_all(&work);
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
}

/// The buffers a run gets are copies of the problem's on the device (FP8's quantized bytes cannot
/// be uploaded from the FP32 inputs): a copy holds, guard zones included, the bytes an upload of
/// the same values with the same guard would, and its own scales, equal to the original's.
fn copies_are_guarded_like_uploads() -> Result<(), Failed> {
    use common::harness::matrix::DeviceMatrix;
    use common::harness::precision::{Elem, Precision};
    use cudarc::driver::DevicePtr;
    let e = |e: common::Error| e.to_string();
    let gpu = device::Gpu::shared().map_err(e)?;
    let whole = |m: &DeviceMatrix| -> Result<Vec<u8>, String> {
        let mut bytes = vec![0u8; (m.len + 2 * m.guard) * m.elem.bytes()];
        gpu.download(m.data.device_ptr(&gpu.stream).0, &mut bytes).map_err(e)?;
        Ok(bytes)
    };
    let host = data::Inputs::new(&common::Gemm::new(common::Shape::new(33, 31, 7), 1.0, 0.0), 5).a;
    for elem in [Elem::F32, Elem::F16, Elem::Bf16, Elem::F64] {
        let copy = DeviceMatrix::guarded(&gpu, &host, elem, 0).and_then(|m| m.guarded_copy(&gpu, 1024)).map_err(e)?;
        if whole(&copy)? != whole(&DeviceMatrix::guarded(&gpu, &host, elem, 1024).map_err(e)?)? {
            return Err(format!("a guarded copy in {elem:?} differs from the guarded upload").into());
        }
    }
    if gpu.cc < Precision::Fp8Block.min_cc() {
        return Ok(());
    }
    let q = common::harness::quantize::quantize(
        &gpu,
        Precision::Fp8Block,
        common::harness::quantize::Operand::A,
        &host,
        33,
        7,
    )
    .map_err(e)?;
    let copy = q.guarded_copy(&gpu, 4096).map_err(e)?;
    if copy.guard_damage(&gpu).map_err(e)? != (0, 0) || copy.bytes(&gpu).map_err(e)? != q.bytes(&gpu).map_err(e)? {
        return Err("an FP8 copy does not hold the original's bytes and scales inside intact guards".into());
    }
    if copy.scales_ptr(&gpu) == q.scales_ptr(&gpu) {
        return Err("an FP8 copy shares the original's scales".into());
    }
    Ok(())
}

fn main() -> ExitCode {
    if let Some(code) = grader::dispatch() {
        return code;
    }
    common::tools::cli::program_start();
    let mut args = Arguments::from_args();
    args.test_threads.get_or_insert(1);
    let nvrtc = device::nvrtc_present();
    let gpu = device::Gpu::shared();
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
        let make: Make = Box::new(move |path: &Path, _: &Path| std::fs::write(path, source));
        // A broken kernel is its folder's step's; a cheat is step 4's.
        let step = folder.strip_prefix("labs/broken/").unwrap_or("04");
        let trial = Trial::test(format!("{folder}/{name}"), move || grade(step, OsStr::new(name), &make, &expect?))
            .with_kind(if needs_gpu { "gpu" } else { "nvrtc" })
            .with_ignored_flag(!nvrtc || (needs_gpu && gpu.is_err()));
        trials.push(trial);
    }
    for (name, make, expect) in fixtures(gpu.is_ok()) {
        let label = format!("fixture/{}", name.to_string_lossy());
        trials.push(
            Trial::test(label, move || grade("04", &name, &make, &expect)).with_kind("nvrtc").with_ignored_flag(!nvrtc),
        );
    }
    // Where there is no driver at all: a GPU that is there but broken is another test's.
    trials.push(
        Trial::test("machine/no-gpu-stops-before-scoring", no_gpu_stops_before_scoring)
            .with_kind("nvrtc")
            .with_ignored_flag(!nvrtc || device::driver_present()),
    );
    trials.push(
        Trial::test("buffers/copies-are-guarded-like-uploads", copies_are_guarded_like_uploads)
            .with_kind("gpu")
            .with_ignored_flag(gpu.is_err()),
    );
    let with_gpu = gpu.is_ok();
    trials.push(
        Trial::test("class/hostile-folder", move || class::grade_the_class(with_gpu))
            .with_kind(if with_gpu { "gpu" } else { "nvrtc" })
            .with_ignored_flag(!nvrtc),
    );
    libtest_mimic::run(&args, trials).exit_code()
}
