//! Holds for every kernel in the registry, with no GPU: each variant a step can pick
//! compiles with NVRTC for sm_80 and sm_90 (or the one architecture a step is built for) without spills or serialized wgmma (ignored when libnvrtc is
//! absent), and every launch stays within CUDA's limits or is refused with an error.

use common::compile::compile;
use common::device::nvrtc_present;
use common::testing::{EDGE_CASES, SHAPE_SUITE};
use common::{KernelSource, Launch, Shape, Step};
use libtest_mimic::{Arguments, Failed, Trial};

const ARCHS: [&str; 2] = ["sm_80", "sm_90"];

/// Shapes whose launches cover every variant a step picks: the suite, the edge cases,
/// the bench shapes and a few alignments.
fn shapes() -> Vec<Shape> {
    let mut v: Vec<Shape> = SHAPE_SUITE.to_vec();
    v.extend(EDGE_CASES.iter().map(|c| c.0));
    v.extend(common::bench::DEFAULT_SHAPES);
    v.extend([
        Shape::new(4096, 11008, 4096),
        Shape::new(16, 11008, 4096),
        Shape::new(8192, 1024, 4096),
        Shape::cube(8192),
    ]);
    v.extend([Shape::new(100, 100, 100), Shape::new(64, 64, 66), Shape::new(64, 66, 64), Shape::new(66, 64, 64)]);
    v
}

fn variants(step: &Step) -> Vec<Launch> {
    let mut out: Vec<Launch> = Vec::new();
    for s in shapes().iter().filter(|s| !s.is_empty()) {
        let l = (step.launch)(s);
        if !out.iter().any(|o| o.defines == l.defines) {
            out.push(l);
        }
    }
    out
}

fn compiles_without_spills(source: &KernelSource, defines: &[(&str, i64)], arch: &str) -> Result<(), Failed> {
    let c = compile(source, defines, arch).map_err(|e| e.to_string())?;
    let r = c.resources;
    if r.registers == 0 {
        return Err(format!("no ptxas report in the NVRTC log, so spills cannot be checked:\n{}", c.log).into());
    }
    if r.spills() > 0 || r.stack_bytes > 0 {
        return Err(format!("{} {defines:?} on {arch} spills: {r:?}\n{}", source.name, c.log).into());
    }
    // ptxas's notes that it had to wait for every wgmma (C7512, C7519, ...): a slow kernel, still correct.
    if c.log.contains("wgmma.mma_async instructions are serialized") || c.log.contains("warpgroup.arrive is injected") {
        return Err(format!("{} {defines:?} on {arch}: ptxas serializes the wgmma:\n{}", source.name, c.log).into());
    }
    Ok(())
}

/// Experiment kernels kept for the notes (`notes/experiments/<step>/*.cu`, embedded at
/// build time) keep compiling with their step's defines.
fn experiment_compiles(step: &Step, source: &KernelSource, arch: &str) -> Result<(), Failed> {
    let launch = (step.launch)(&Shape::cube(4096));
    compile(source, &launch.defines, arch).map_err(|e| e.to_string())?;
    Ok(())
}

fn launches_are_checked(step: &Step) -> Result<(), Failed> {
    for s in shapes() {
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
    compiles_without_spills(&steps::kernels::ROOF, &launch.defines, arch)
}

/// A kernel that does not compile gets NVRTC's log, naming the file and line.
fn compile_errors_name_file_and_line() -> Result<(), Failed> {
    let source = KernelSource {
        name: "broken/kernel.cu".into(),
        code: "#include \"sgemm.cuh\"\nextern \"C\" __global__ void sgemm() {\n    undeclared = 1;\n}\n".into(),
    };
    match compile(&source, &[], "sm_90") {
        Err(e @ common::Error::Compile { .. }) if e.to_string().contains("broken/kernel.cu(3)") => Ok(()),
        Err(e) => Err(format!("unexpected error: {e}").into()),
        Ok(_) => Err("a broken kernel compiled".into()),
    }
}

fn main() -> std::process::ExitCode {
    common::cli::program_start();
    let args = Arguments::from_args();
    let no_nvrtc = !nvrtc_present();
    if no_nvrtc {
        // CI sets SGEMM_REQUIRE_NVRTC: there a missing NVRTC is a failure, not a skip.
        if std::env::var_os("SGEMM_REQUIRE_NVRTC").is_some() {
            eprintln!("error: SGEMM_REQUIRE_NVRTC is set but {}", common::Error::NoNvrtc);
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
        for source in steps::kernels::experiments(step.name) {
            let file = source.name.rsplit('/').next().unwrap_or_default().trim_end_matches(".cu").to_string();
            let name = format!("{}/experiment-{file}", step.id());
            trials.push(
                Trial::test(name, move || experiment_compiles(step, &source, "sm_90"))
                    .with_kind("nvrtc")
                    .with_ignored_flag(no_nvrtc),
            );
        }
        // A step built for one architecture's own instructions (sm_90a) compiles for it alone.
        let archs: Vec<&'static str> = step.arch.map_or(ARCHS.to_vec(), |a| vec![a]);
        for launch in variants(step) {
            for arch in archs.iter().copied() {
                let name = format!("{}/nvrtc-{arch}{}", step.name, describe(&launch.defines));
                let l = launch.clone();
                trials.push(
                    Trial::test(name, move || compiles_without_spills(&step.kernel, &l.defines, arch))
                        .with_kind("nvrtc")
                        .with_ignored_flag(no_nvrtc),
                );
            }
        }
    }
    libtest_mimic::run(&args, trials).exit_code()
}

fn describe(defines: &[(&str, i64)]) -> String {
    defines.iter().map(|(n, v)| format!("/{n}={v}")).collect()
}
