//! The student copy of the ladder for one lab: the step's kernel (and every later step's,
//! which contain its solution) replaced by a skeleton, and nothing of the staff's: no `labs/`
//! (broken kernels, worked answers, hidden-case examples), no `notes/` (experiments and
//! measurements of the solutions), no `scripts/`, no CI, no test fixtures built from a step's
//! kernel, none of the grader's tests (the attacks it is checked against), no staff tests that
//! need the real kernels, and of the book's chapter for course staff only what a student sees of
//! the grading. A marker file makes `grade` refuse inside the copy, the README is the lab's, and
//! the copy's cargo configuration requires NVRTC: a student's `cargo test` never says ok
//! without having compiled the kernel. The grader's source stays (the `xtask` tools link it, and
//! its soundness does not rest on its source being unknown).

use crate::workspace_root;
use common::Step;
use std::path::{Path, PathBuf};

/// The marker at the top of a handout; `grade` refuses where it is.
pub const MARKER: &str = ".handout";

/// What of the tracked tree a handout leaves out (prefixes of paths).
const LEFT_OUT: &[&str] = &[
    "labs/",
    "notes/",
    "scripts/",
    ".ci/",
    "CONTRIBUTING.md",
    // The attacks the grader is checked against, and its class test.
    "grader/tests/",
    // Built from step 1's kernel: the FP32 fixtures of `steps/tests/precision.rs`.
    "steps/tests/fixtures/",
    "steps/tests/precision.rs",
    // Compares the real kernels' machine code: the skeletons have other code.
    "steps/tests/rehash.rs",
];

/// The markers around the part of the staff's chapter (`book/src/labs.md`) that is the handout's
/// page on how a lab is graded.
const STUDENT_PAGE: (&str, &str) = ("<!-- handout: from here -->", "<!-- handout: to here -->");

/// The skeleton that replaces a kernel: its signature, then TODOs and an empty body. Anchors
/// inside the original kernel stay, empty, so that the book still builds in the handout.
pub fn skeleton(step: &Step, source: &str) -> Result<String, String> {
    let (start_tag, end_tag) = ("// ANCHOR: kernel\n", "// ANCHOR_END: kernel");
    let start = source.find(start_tag).ok_or(format!("{} has no `ANCHOR: kernel`", step.name))? + start_tag.len();
    let end = start + source[start..].find(end_tag).ok_or(format!("{} has no `ANCHOR_END: kernel`", step.name))?;
    let region = &source[start..end];
    let body_start = region.find('{').ok_or(format!("{}: no kernel body", step.name))? + 1;
    let signature = &region[..body_start];
    let inner: Vec<&str> =
        region.lines().filter_map(|l| l.trim().strip_prefix("// ANCHOR: ")).filter(|name| !name.is_empty()).collect();
    // A kernel that stores C through its tensor map (steps 12 and 13) has no pointer to C: the
    // TMA stores boxes of NaN (bytes of 0xff are a NaN in FP32, FP16 and BF16) staged in the
    // step's own dynamic shared memory, on the swizzle's 1024-byte period.
    let poison = if signature.contains("TensorMap tmC") {
        "    extern __shared__ unsigned char smem_raw[];\n    \
         const unsigned box = (smem_addr(smem_raw) + 1023) & ~1023u;\n    \
         for (int i = threadIdx.x; i < CHUNK_BYTES; i += blockDim.x) smem_raw[box - smem_addr(smem_raw) + i] = 0xff;\n    \
         fence_async_shared();\n    \
         __syncthreads();\n    \
         const int cols = 128 / sizeof(P::out_t), across = CEIL_DIV(N, cols), boxes = across * CEIL_DIV(M, 64);\n    \
         if (threadIdx.x == 0) {\n        \
         for (int b = blockIdx.x; b < boxes; b += gridDim.x) tma_store(&tmC, box, b % across * cols, b / across * 64);\n        \
         tma_store_commit();\n        \
         tma_store_drain();\n    }\n"
            .to_string()
    } else {
        "    const long long threads = (long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;\n    \
         const long long block = blockIdx.x + (long long)gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);\n    \
         const long long thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);\n    \
         for (long long i = block * blockDim.x * blockDim.y * blockDim.z + thread; i < (long long)M * N; i += threads) {\n        \
         C[i] = __int_as_float(0x7fc00000);\n    }\n"
            .to_string()
    };
    let mut body = format!(
        "\n    // TODO({}): {}.\n    // The book's chapter on this step explains the idea; its exercises are the assignment.\n\
         \n    // Placeholder, to delete: every element of C becomes NaN, so every correctness check fails.\n{poison}",
        step.name, step.idea
    );
    for name in inner {
        body += &format!("    // ANCHOR: {name}\n    // (your code)\n    // ANCHOR_END: {name}\n");
    }
    Ok(format!("{}{signature}{body}}}\n{}", &source[..start], &source[end..]))
}

fn git_files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let out = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err("`git ls-files` failed: the handout is made from a git checkout".into());
    }
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
        .collect())
}

/// Whether a tracked file goes into the handout.
pub fn kept(rel: &Path) -> bool {
    let rel = rel.to_string_lossy();
    !LEFT_OUT.iter().any(|p| rel.starts_with(p))
}

/// A crate manifest without the `[[test]]` targets whose files the handout leaves out.
fn without_left_out_tests(manifest: &Path, text: &str) -> String {
    let dir = manifest.parent().unwrap_or(Path::new(""));
    let blocks: Vec<&str> = text.split("\n\n").collect();
    let kept: Vec<&str> = blocks
        .into_iter()
        .filter(|block| {
            let name = block.strip_prefix("[[test]]\nname = \"").and_then(|r| r.split('"').next());
            name.is_none_or(|n| kept(&dir.join("tests").join(format!("{n}.rs"))))
        })
        .collect();
    let mut out = kept.join("\n\n");
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// A file's text as the handout has it, where it differs from the tree's.
fn edited(rel: &Path, text: &str) -> Result<Option<String>, String> {
    let rel_text = rel.to_string_lossy();
    Ok(Some(match rel_text.as_ref() {
        // The maintainers' tools keep their tests to the real kernels and results.
        "xtask/Cargo.toml" => {
            without_left_out_tests(rel, text) + "\n[[bin]]\nname = \"xtask\"\npath = \"src/main.rs\"\ntest = false\n"
        }
        ".cargo/config.toml" => {
            text.to_string()
                + "\n[env]\n# A lab's tests compile the kernel with NVRTC: without it they fail with one line that says how to\n\
                   # install it, instead of reporting the compile tests as ignored.\nSGEMM_REQUIRE_NVRTC = \"1\"\n"
        }
        "book/src/labs.md" => student_page(text)?,
        "book/src/SUMMARY.md" => text.replace("[For course staff: labs](labs.md)", "[How your lab is graded](labs.md)"),
        _ if rel_text.ends_with("Cargo.toml") && text.contains("[[test]]") => without_left_out_tests(rel, text),
        _ => return Ok(None),
    }))
}

/// The handout's page on grading: the student's part of the staff's chapter.
fn student_page(chapter: &str) -> Result<String, String> {
    let (from, to) = STUDENT_PAGE;
    let start = chapter.find(from).ok_or(format!("book/src/labs.md has no `{from}`"))? + from.len();
    let end = start + chapter[start..].find(to).ok_or(format!("book/src/labs.md has no `{to}`"))?;
    Ok(format!("# How your lab is graded\n\n{}\n", chapter[start..end].trim()))
}

/// The handout's README: the task, and how to test it with and without a GPU.
fn readme(step: &Step, skeletons: &[&str]) -> String {
    let name = step.name;
    format!(
        "# Lab: {name}\n\n\
         Implement `{name}/src/kernel.cu`: {idea}. The book's chapter on this step (`mdbook serve book`, \
         then http://localhost:3000) explains the idea; its exercises are the assignment.\n\n\
         The kernels of {all} are skeletons here: they compile, and write NaN into C so that every \
         correctness check fails until you write the kernel.\n\n\
         ## Test\n\n\
         Without a GPU, with NVRTC installed, this compiles your kernel for sm_80 and sm_90 and fails on a \
         compile error (the GPU tests are reported as ignored):\n\n    cargo test -p {name}\n\n\
         This copy requires NVRTC (its `.cargo/config.toml` sets `SGEMM_REQUIRE_NVRTC`): without it the \
         command fails with one line that says how to install it, and never reports a kernel it did not \
         compile as passing. Install NVRTC and the CUDA headers with\n\n    {pip}\n\n\
         (found in your home, no paths to set), or with the same `pip install` inside a virtual \
         environment: it is found while the environment is active (`source VENV/bin/activate`, which sets \
         `VIRTUAL_ENV`), or when the environment is a `.venv*` folder at the top of this copy. A CUDA \
         toolkit on `LD_LIBRARY_PATH` works too.\n\n\
         NVRTC's log for your kernel alone, no GPU needed (`--kernel mine.cu` for another file):\n\n    \
         cargo run -p {name} -- --compile-only\n\n\
         With an NVIDIA GPU the same `cargo test` also runs the shared shape suite against cuBLAS and a float64 \
         reference. Time it against cuBLAS:\n\n    cargo bench -p {name}\n\n\
         One verified and timed GEMM of any shape, or your kernel from another file with the step's launch:\n\n    \
         cargo run --release -p {name} -- --m 1000 --n 1001 --k 999\n    \
         cargo run --release -p {name} -- --kernel mine.cu\n\n\
         `cargo test --workspace` runs every test of this copy.\n\n\
         ## Submit\n\n\
         Submit `{name}/src/kernel.cu` alone. It is graded by the course staff on the public shape suite, on hidden \
         shapes, on precision probes, under compute-sanitizer, and on its speed against the step's reference \
         solution; it is compiled by itself, so it may include only the ladder's own headers ({headers}) and \
         the CUDA headers (`<mma.h>`, `<cuda_fp16.h>`, ...). Grading needs the staff's copy of the ladder: \
         `cargo xtask grade` refuses in this one. The book's page \"How your lab is graded\" says what your score \
         card shows.\n",
        idea = step.idea,
        all = skeletons.join(", "),
        headers = step.kernel.served().iter().map(|(h, _)| format!("`\"{h}\"`")).collect::<Vec<_>>().join(", "),
        pip = common::harness::toolkit::PIP_INSTALL,
    )
}

#[derive(clap::Args)]
pub struct HandoutArgs {
    /// The step: id, crate name or number (e.g. 05)
    #[arg(value_parser = crate::step_key)]
    step: &'static Step,
    /// A new folder for the student copy (it must not exist)
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

pub fn handout(HandoutArgs { step, out }: HandoutArgs) -> Result<(), String> {
    make(&workspace_root(), step, &out).map(|n| {
        println!("handout for {}: {n} files in {}", step.name, out.display());
    })
}

/// Writes the handout of `step` from the tree at `root` into `out`; returns the number of files.
pub fn make(root: &Path, step: &Step, out: &Path) -> Result<usize, String> {
    if out.exists() {
        return Err(format!("{} exists; choose a new folder", out.display()));
    }
    let index = steps::ALL.iter().position(|s| s.name == step.name).unwrap_or(0);
    let replaced: Vec<&Step> = steps::ALL.iter().skip(index).collect();
    let mut copied = 0;
    // Tracked files as they are in the working tree (one deleted but not yet committed is gone).
    for rel in git_files(root)?.into_iter().filter(|r| kept(r) && root.join(r).exists()) {
        let dest = out.join(&rel);
        std::fs::create_dir_all(dest.parent().unwrap_or(out)).map_err(|e| e.to_string())?;
        let write = |text: String| std::fs::write(&dest, text).map_err(|e| format!("{}: {e}", dest.display()));
        if let Some(s) = replaced.iter().find(|s| rel == Path::new(s.name).join("src/kernel.cu")) {
            write(skeleton(s, &s.kernel.code)?)?;
        } else if let Some(s) = diff_into(&rel, &replaced) {
            // The book's diff that makes a rung holds that rung's kernel: the lab's to write.
            write(format!("// The diff that makes {s} is the kernel this handout asks you to write.\n"))?;
        } else if rel == Path::new("README.md") {
            // Replaced below.
            continue;
        } else if let Some(text) =
            std::fs::read_to_string(root.join(&rel)).ok().map(|t| edited(&rel, &t)).transpose()?.flatten()
        {
            write(text)?;
        } else {
            std::fs::copy(root.join(&rel), &dest).map_err(|e| format!("{}: {e}", rel.display()))?;
        }
        copied += 1;
    }
    let mut names: Vec<&str> = replaced.iter().map(|s| s.name).collect();
    names.dedup();
    std::fs::write(out.join("README.md"), readme(step, &names)).map_err(|e| e.to_string())?;
    std::fs::write(out.join(MARKER), format!("{}\n", step.name)).map_err(|e| e.to_string())?;
    Ok(copied + 2)
}

/// The skeleton step that a generated diff of the book (`book/src/generated/diffs/stepAA-stepBB*.diff`)
/// leads to, if its later kernel is one the handout replaces.
fn diff_into<'a>(rel: &Path, replaced: &[&'a Step]) -> Option<&'a str> {
    let name = rel.strip_prefix("book/src/generated/diffs").ok()?.to_str()?;
    let later = name.split(['-', '.']).nth(1)?;
    replaced.iter().map(|s| s.name).find(|s| s.split('-').next() == Some(later))
}

/// An error when the grader runs inside a handout (its workspace has the marker).
pub fn refuse_inside_handout() -> Result<(), String> {
    if workspace_root().join(MARKER).exists() {
        return Err("grading needs the course staff's copy of the ladder: this is a student handout, whose \
                    reference kernels are skeletons (speed would be measured against your own kernel)"
            .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skeletons_keep_signature_and_anchors() {
        for step in steps::ALL {
            let s = skeleton(step, &step.kernel.code).unwrap();
            assert!(s.contains("void sgemm(") || s.contains("sgemm(int M"), "{}", step.name);
            assert!(s.contains("TODO("), "{}", step.name);
            assert!(!s.contains("store_c(C, cRow") && !s.contains("acc[i][j] +="), "{} keeps its solution", step.name);
            for line in step.kernel.code.lines() {
                if let Some(name) = line.trim().strip_prefix("// ANCHOR: ") {
                    assert!(s.contains(&format!("// ANCHOR: {name}")), "{} lost anchor {name}", step.name);
                }
            }
        }
    }

    #[test]
    fn a_diff_is_hidden_when_its_later_kernel_is_the_labs() {
        let from = |n: &str| steps::ALL.iter().skip_while(|s| !s.name.starts_with(n)).collect::<Vec<_>>();
        let diff = Path::new("book/src/generated/diffs/step11-step12.diff");
        assert_eq!(diff_into(diff, &from("step12")), Some("step12-epilogue"));
        assert_eq!(diff_into(diff, &from("step11")), Some("step12-epilogue"));
        assert_eq!(diff_into(diff, &from("step13")), None);
        assert_eq!(diff_into(Path::new("book/src/step12.md"), &from("step04")), None);
    }

    /// A handout of `key` made from this tree into a fresh folder, and its files (paths inside
    /// it); `None` where there is no checkout this test binary was built from (a bundle).
    fn made(key: &str) -> Option<(PathBuf, Vec<String>)> {
        let root = workspace_root();
        if !root.join(".git").exists() {
            eprintln!("skipped: no checkout at {} to make a handout from (a bundle)", root.display());
            return None;
        }
        // A checkout at the build path that is not this build's (a bundle run beside another
        // commit's tree) does not hold the files this binary was built with: nothing to test.
        let tracked = git_files(&root).unwrap_or_default();
        let headers = steps::ALL.iter().flat_map(|s| s.kernel.headers).map(|h| h.path);
        let mut files = steps::ALL.iter().map(|s| s.kernel.name.as_ref()).chain(headers);
        if !files.all(|f| tracked.contains(&PathBuf::from(f))) {
            eprintln!("skipped: the checkout at {} is not the one this test was built from", root.display());
            return None;
        }
        let out = std::env::temp_dir().join(format!("handout-test-{key}-{}", std::process::id()));
        make(&root, steps::find(key).unwrap(), &out).unwrap();
        let mut files = Vec::new();
        let mut stack = vec![out.clone()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                if e.path().is_dir() { stack.push(e.path()) } else { files.push(e.path()) }
            }
        }
        let rel = files.iter().map(|f| f.strip_prefix(&out).unwrap().to_string_lossy().into_owned()).collect();
        Some((out, rel))
    }

    /// A handout of step 4 from this tree: nothing of the staff's, no kernel of step 4 or later,
    /// the README of the lab, the marker.
    #[test]
    fn a_handout_leaks_nothing() {
        let Some((out, rel)) = made("04") else { return };
        for bad in
            ["labs/", "notes/", "scripts/", ".ci/", "steps/tests/fixtures/", "grader/tests/", "steps/tests/rehash"]
        {
            assert!(!rel.iter().any(|r| r.starts_with(bad)), "{bad} in the handout");
        }
        let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
        let page = read("book/src/labs.md");
        assert!(page.starts_with("# How your lab is graded") && page.contains("16384 bytes"), "{page}");
        for staff in ["hidden cases around", "labs/cheats", "--hidden"] {
            assert!(!page.contains(staff), "the handout's labs.md holds the staff's {staff:?}");
        }
        assert!(read("book/src/SUMMARY.md").contains("[How your lab is graded](labs.md)"));
        assert!(read(".cargo/config.toml").contains("SGEMM_REQUIRE_NVRTC = \"1\""));
        assert!(read("xtask/Cargo.toml").contains("test = false"));
        for (manifest, gone) in [("grader/Cargo.toml", "cheats"), ("steps/Cargo.toml", "rehash")] {
            assert!(!read(manifest).contains(&format!("name = \"{gone}\"")), "{manifest} still names {gone}");
        }
        for s in steps::ALL.iter().skip(3) {
            let kernel = std::fs::read_to_string(out.join(s.name).join("src/kernel.cu")).unwrap();
            assert_ne!(kernel, s.kernel.code, "{}'s kernel is in the handout", s.name);
            assert!(kernel.contains("TODO("), "{}", s.name);
        }
        let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
        assert!(readme.starts_with("# Lab: step04-bankfree") && !readme.contains("notes/"), "{readme}");
        assert!(readme.contains("VIRTUAL_ENV") && readme.contains("--compile-only"), "{readme}");
        assert!(std::fs::read_to_string(out.join("steps/Cargo.toml")).unwrap().contains("all_kernels"));
        assert!(!std::fs::read_to_string(out.join("steps/Cargo.toml")).unwrap().contains("precision"));
        assert_eq!(std::fs::read_to_string(out.join(MARKER)).unwrap(), "step04-bankfree\n");
        // The book's diffs that make the rungs hold their kernels: none comes along.
        for diff in std::fs::read_dir(out.join("book/src/generated/diffs")).unwrap().flatten() {
            let text = std::fs::read_to_string(diff.path()).unwrap();
            assert!(text.contains("this handout asks you to write") && !text.contains("@@"), "{text}");
        }
        // A later rung's kernel includes the headers of the rungs before it: they come along.
        for h in steps::ALL.iter().flat_map(|s| s.kernel.headers) {
            assert!(out.join(h.path).exists(), "{} is not in the handout", h.path);
        }
        std::fs::remove_dir_all(&out).unwrap();
    }

    /// Step 14's lab: its kernel a skeleton with the FP8 signature (the scales' addresses after
    /// C), the headers of steps 10-12 it includes beside it and named in the README, the kernels
    /// of the steps before it whole, and the book's diff into it hidden.
    #[test]
    fn the_fp8_handout_keeps_the_headers_its_kernel_includes() {
        let Some((out, rel)) = made("14") else { return };
        let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
        let step = steps::find("14").unwrap();
        let kernel = read("step14-fp8/src/kernel.cu");
        assert!(
            kernel.contains("TODO(step14-fp8)") && kernel.contains("const float* __restrict__ scale_b"),
            "{kernel}"
        );
        assert!(!kernel.contains("promote(d, t, sa, sb)"), "step 14's solution is in the handout");
        let readme = read("README.md");
        assert!(readme.starts_with("# Lab: step14-fp8"), "{readme}");
        assert!(step.kernel.headers.len() == 3, "step 14 includes the headers of steps 10, 11 and 12");
        for h in step.kernel.headers {
            assert!(out.join(h.path).exists(), "{} is not in the handout", h.path);
            assert!(readme.contains(&format!("`\"{}\"`", h.name)), "the README does not name {}: {readme}", h.name);
        }
        assert_eq!(read("step12-epilogue/src/kernel.cu"), steps::find("12").unwrap().kernel.code);
        for diff in rel.iter().filter(|r| r.starts_with("book/src/generated/diffs/step13-step14")) {
            assert!(read(diff).contains("this handout asks you to write"), "{diff}");
        }
        std::fs::remove_dir_all(&out).unwrap();
    }

    /// Every skeleton passes the grader's include policy and, where NVRTC is, compiles in the
    /// variant of the speed case for its step's first target (step 14's in each FP8 precision):
    /// a lab starts from a kernel the grader accepts.
    #[test]
    fn skeletons_pass_the_policy_and_compile() {
        let nvrtc = common::harness::device::nvrtc_present();
        if !nvrtc {
            eprintln!("note: no NVRTC, so the skeletons' compiles are not checked");
        }
        for step in steps::ALL {
            let code = skeleton(step, &step.kernel.code).unwrap();
            crate::policy::check_includes(step, "kernel.cu", &code).unwrap();
            if nvrtc {
                let source = step.kernel.with_code(format!("{}/src/kernel.cu", step.name), code);
                let defines = (step.launch)(&common::Shape::cube(4096)).defines;
                let arch = common::tools::cli::default_targets(step)[0];
                let compiled = common::harness::compile::compile(&source, &defines, arch);
                compiled.unwrap_or_else(|e| panic!("the skeleton of {} on {arch}: {e}", step.id()));
            }
        }
    }
}
