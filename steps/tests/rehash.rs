//! What `cargo xtask rehash` compares, on the steps' own kernels with NVRTC (no GPU; ignored
//! when libnvrtc is absent): every variant for a sweep, one launch's for a profile; and a claim
//! made with it: step 15 without its swap is step 12. A test of the staff's tool on the real
//! kernels: a lab handout, whose kernels are skeletons, leaves it out.

use common::harness::device::nvrtc_present;
use common::tools::testing::{nvrtc_missing, nvrtc_required, same_machine_code, same_machine_code_at};
use libtest_mimic::{Arguments, Failed, Trial};

/// `cargo xtask rehash` keeps a step's results across a header edit only where its machine code
/// stays the same: a comment at the end of the Hopper header changes none of step 9's CUBINs, one
/// at its start moves every line (the line tables change, the code does not), a wait that tests
/// instead of trying changes the code.
fn rehash_compares_machine_code() -> Result<(), Failed> {
    let step = steps::by_id("step09-wgmma-tma-fp16").ok_or("no step 9")?;
    let edited = |edit: &dyn Fn(&str) -> String| -> Vec<(&'static str, String)> {
        let served = step.kernel.served().into_iter();
        served.map(|(n, t)| (n, if n == "hopper.cuh" { edit(t) } else { t.to_string() })).collect()
    };
    let same = |headers: &[(&'static str, String)]| {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, t)| (*n, t.as_str())).collect();
        same_machine_code(step, &step.kernel, &headers, &[])
    };
    let comment = edited(&|t| format!("{t}\n// a comment no kernel compiles\n"));
    let compared = same(&comment)?;
    if compared == 0 {
        return Err("no CUBIN compared".into());
    }
    same(&edited(&|t| format!("// a comment that moves every line below it\n\n{t}")))?;
    let wait = edited(&|t| t.replace("mbarrier.try_wait.parity", "mbarrier.test_wait.parity"));
    match same(&wait) {
        Err(e) if e.contains("other machine code") => Ok(()),
        Err(e) => Err(format!("unexpected error: {e}").into()),
        Ok(_) => Err("a changed wait left the machine code the same".into()),
    }
}

/// Step 15 without its swap is step 12: the same machine code at 4096³, where its rule keeps step
/// 12's launch, so that no large shape can be slower than step 12.
fn step15_unswapped_is_step12() -> Result<(), Failed> {
    use common::harness::compile::compile;
    use common::harness::cubin::machine_code;
    let shape = common::Shape::cube(4096);
    for (ours, theirs) in
        [(&step15_skinny::FP16, &step12_epilogue::FP16), (&step15_skinny::BF16_C16, &step12_epilogue::BF16_C16)]
    {
        let launch = (ours.launch)(&shape);
        if launch.value("SWAP") != Some(0) {
            return Err(format!("{} swaps at {shape}", ours.id()).into());
        }
        let now = compile(&ours.kernel, &launch.defines, "sm_90a").map_err(|e| e.to_string())?;
        let then = compile(&theirs.kernel, &(theirs.launch)(&shape).defines, "sm_90a").map_err(|e| e.to_string())?;
        if machine_code(&now.cubin)? != machine_code(&then.cubin)? {
            return Err(format!("{} and {} differ in machine code at {shape}", ours.id(), theirs.id()).into());
        }
    }
    Ok(())
}

/// A profile is one launch at one shape, so `rehash` keeps it where that launch's machine code
/// stayed the same though another shape's changed: an edit inside step 14's loop in turns (the
/// block scales' 192-wide tiles, 4096³) leaves its 128-wide launch (2048³) as it was.
fn rehash_keeps_a_shape_whose_code_stayed() -> Result<(), Failed> {
    let step = &step14_fp8::FP8_BLOCK;
    let (from, to) = ("                        start(t0, ready);", "                        start(t0);");
    if !step.kernel.code.contains(from) {
        return Err("step 14's loop in turns has no `start(t0, ready)` to edit".into());
    }
    let old = step.kernel.with_code(step.kernel.name.clone(), step.kernel.code.replace(from, to));
    let headers = step.kernel.served();
    let at = |n| [common::Shape::cube(n)];
    let kept = same_machine_code_at(step, &old, &headers, &at(2048))?;
    if kept == 0 {
        return Err("no CUBIN compared at 2048³".into());
    }
    match same_machine_code_at(step, &old, &headers, &at(4096)) {
        Err(e) if e.contains("other machine code") => {}
        other => return Err(format!("the edit in turns left 4096³'s machine code the same: {other:?}").into()),
    }
    match same_machine_code(step, &old, &headers, &at(2048)) {
        Err(e) if e.contains("other machine code") => Ok(()),
        other => Err(format!("every variant compared, the edit went unseen: {other:?}").into()),
    }
}

fn main() -> std::process::ExitCode {
    common::tools::cli::program_start();
    let args = Arguments::from_args();
    let no_nvrtc = !nvrtc_present();
    if no_nvrtc && nvrtc_required() {
        eprintln!("error: {}", nvrtc_missing());
        return std::process::ExitCode::FAILURE;
    }
    let trials = vec![
        Trial::test("nvrtc/rehash-compares-machine-code", rehash_compares_machine_code)
            .with_kind("nvrtc")
            .with_ignored_flag(no_nvrtc),
        Trial::test("nvrtc/step15-unswapped-is-step12", step15_unswapped_is_step12)
            .with_kind("nvrtc")
            .with_ignored_flag(no_nvrtc),
        Trial::test("nvrtc/rehash-keeps-a-shape-whose-code-stayed", rehash_keeps_a_shape_whose_code_stayed)
            .with_kind("nvrtc")
            .with_ignored_flag(no_nvrtc),
    ];
    libtest_mimic::run(&args, trials).exit_code()
}
