//! Holds for every kernel in the registry, with no GPU: every launch stays within CUDA's limits
//! or is refused with an error, and the kernels kept beside the steps (experiments, the roof
//! kernel) compile with NVRTC (ignored when libnvrtc is absent). Each step's own variants are
//! compiled by the step's test binary; what `cargo xtask rehash` compares, by `tests/rehash.rs`.

use common::harness::compile::compile;
use common::harness::device::nvrtc_present;
use common::tools::testing::{compiles_cleanly, nvrtc_missing, nvrtc_required, variant_shapes};
use common::{KernelSource, Shape, Step};
use libtest_mimic::{Arguments, Failed, Trial};

const ARCHS: [&str; 2] = ["sm_80", "sm_90"];

/// Experiment kernels kept for the notes and the staff's worked answers (embedded at build
/// time) keep compiling with their step's defines.
fn kept_kernel_compiles(step: &Step, source: &KernelSource, arch: &str) -> Result<(), Failed> {
    let launch = (step.launch)(&Shape::cube(4096));
    compile(source, &launch.defines, arch).map_err(|e| e.to_string())?;
    Ok(())
}

/// A partial rung's launches compile without spills, and differ from its rung's at some shape
/// (step 15's only at the skinny ones).
fn partial_compiles(partial: &Step, arch: &str) -> Result<(), Failed> {
    launches_are_checked(partial)?;
    let whole = steps::by_id(&partial.id()).ok_or("no rung of that id")?;
    if variant_shapes().iter().all(|s| (partial.launch)(s).defines == (whole.launch)(s).defines) {
        return Err("the partial rung launches as its rung does".into());
    }
    for s in variant_shapes() {
        compiles_cleanly(&partial.kernel, &(partial.launch)(&s).defines, arch)?;
    }
    Ok(())
}

fn launches_are_checked(step: &Step) -> Result<(), Failed> {
    for s in variant_shapes() {
        (step.launch)(&s).check(&s).map_err(|e| format!("{s}: {e}"))?;
    }
    // Too large for 32-bit indexing: the harness refuses before any launch.
    for s in [Shape::new(1 << 16, 1 << 16, 1), Shape::new(3, 3, 1usize << 31)] {
        if s.check_32bit().is_ok() {
            return Err(format!("{s} should be refused").into());
        }
    }
    Ok(())
}

/// The roof kernel of steps 3 and 4 (`step04-bankfree/examples/roof.cu`) compiles with the
/// steps' defines and either padding, without spills.
fn roof_compiles(pad: i64, arch: &str) -> Result<(), Failed> {
    let launch = (step04_bankfree::STEP.launch)(&Shape::cube(4096)).define("PAD", pad);
    Ok(compiles_cleanly(&steps::kernels::ROOF, &launch.defines, arch)?)
}

/// A kernel that does not compile gets NVRTC's log, naming the file and line.
fn compile_errors_name_file_and_line() -> Result<(), Failed> {
    let source = KernelSource {
        name: "broken/kernel.cu".into(),
        code: "#include \"sgemm.cuh\"\nextern \"C\" __global__ void sgemm() {\n    undeclared = 1;\n}\n".into(),
        headers: &[],
    };
    match compile(&source, &[], "sm_90") {
        Err(e @ common::Error::Compile { .. }) if e.to_string().contains("broken/kernel.cu(3)") => Ok(()),
        Err(e) => Err(format!("unexpected error: {e}").into()),
        Ok(_) => Err("a broken kernel compiled".into()),
    }
}

fn main() -> std::process::ExitCode {
    common::tools::cli::program_start();
    let args = Arguments::from_args();
    let no_nvrtc = !nvrtc_present();
    if no_nvrtc {
        // CI and a lab handout require NVRTC: there a missing NVRTC is a failure, not a skip.
        if nvrtc_required() {
            eprintln!("error: {}", nvrtc_missing());
            return std::process::ExitCode::FAILURE;
        }
        eprintln!("note: kernel compile tests are ignored: {}", common::Error::NoNvrtc);
    }
    let mut trials = vec![
        Trial::test("nvrtc/compile-error-names-file-and-line", compile_errors_name_file_and_line)
            .with_kind("nvrtc")
            .with_ignored_flag(no_nvrtc),
    ];
    for (pad, arch) in [0, 1].into_iter().flat_map(|p| ARCHS.map(|a| (p, a))) {
        trials.push(
            Trial::test(format!("step04-bankfree/roof-pad{pad}-{arch}"), move || roof_compiles(pad, arch))
                .with_kind("nvrtc")
                .with_ignored_flag(no_nvrtc),
        );
    }
    for step in steps::ALL {
        trials.push(Trial::test(format!("{}/launch-limits", step.name), move || launches_are_checked(step)));
        // A step built for one architecture (sm_90a: wgmma, setmaxnreg) compiles its kept kernels
        // for that one; the others for sm_90 (experiments) or both (worked answers).
        let own = step.arch.as_slice();
        let (experiment_archs, answer_archs) = if own.is_empty() { (&ARCHS[1..], &ARCHS[..]) } else { (own, own) };
        let kept = steps::kernels::experiments(step.name).into_iter().map(|k| ("experiment", k, experiment_archs));
        let answers = steps::kernels::solutions(step.name).into_iter().map(|k| ("solution", k, answer_archs));
        for (kind, source, archs) in kept.chain(answers) {
            let file = source.name.rsplit('/').next().unwrap_or_default().trim_end_matches(".cu").to_string();
            for &arch in archs {
                let name = format!("{}/{kind}-{file}-{arch}", step.id());
                let source = source.clone();
                trials.push(
                    Trial::test(name, move || kept_kernel_compiles(step, &source, arch))
                        .with_kind("nvrtc")
                        .with_ignored_flag(no_nvrtc),
                );
            }
        }
        // A partial rung (the step with one idea left out) compiles cleanly at the sweep's shapes.
        for partial in step.partials {
            for &arch in own.iter().chain(if own.is_empty() { &ARCHS[..] } else { &[] }) {
                let name = format!("{}/partial-{}-{arch}", step.id(), partial.name);
                trials.push(
                    Trial::test(name, move || partial_compiles(&partial.step, arch))
                        .with_kind("nvrtc")
                        .with_ignored_flag(no_nvrtc),
                );
            }
        }
        // Each step's own variants are compiled by its test binary (`cargo test -p stepNN-...`).
    }
    libtest_mimic::run(&args, trials).exit_code()
}
