//! What `cargo xtask rehash` compares, on the steps' own kernels with NVRTC (no GPU; ignored
//! when libnvrtc is absent). A test of the staff's tool on the real kernels: a lab handout, whose
//! kernels are skeletons, leaves it out.

use common::harness::device::nvrtc_present;
use common::tools::testing::{nvrtc_missing, nvrtc_required, same_machine_code};
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
    ];
    libtest_mimic::run(&args, trials).exit_code()
}
