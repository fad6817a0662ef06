//! Confinement of the processes that compile or run a submission, by the kernel: Landlock
//! (Linux 5.13 and later) limits which files they can open, and, from Landlock's fourth ABI
//! (Linux 6.7), forbids TCP; resource limits bound a compile's memory and CPU time. Where the
//! kernel offers less, the report says what applied; nothing fails for lack of it.

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, RestrictionStatus, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
};
use std::path::{Path, PathBuf};

/// Folders a child may read (and execute from): the system, and the CUDA folders in use.
fn readable(scratch: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = [
        "/usr",
        "/lib",
        "/lib64",
        "/lib32",
        "/etc",
        "/sys",
        "/bin",
        "/sbin",
        "/opt/nvidia",
        "/run/nvidia-persistenced",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    // Of /proc, this process's own entries and what the CUDA driver reads about the machine:
    // not the other processes' (the grader's command line and environment among them).
    dirs.push(PathBuf::from(format!("/proc/{}", std::process::id())));
    dirs.extend(
        ["driver", "sys", "meminfo", "cpuinfo", "stat", "devices", "filesystems", "modules", "version"]
            .iter()
            .map(|e| Path::new("/proc").join(e)),
    );
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        dirs.extend(std::env::var_os(var).map(PathBuf::from));
    }
    if let Some(p) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    // The CUDA headers NVRTC reads (`common::harness::compile::cuda_include_dirs`).
    dirs.extend(common::harness::compile::cuda_include_dirs());
    dirs.push(scratch.to_path_buf());
    dirs.retain(|d| d.exists());
    dirs
}

/// What confinement applied, in a few words for the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confinement {
    pub files: String,
    pub network: String,
}

impl Confinement {
    pub fn describe(&self) -> String {
        format!("files: {}; network: {}", self.files, self.network)
    }
}

fn status(s: &RestrictionStatus) -> &'static str {
    match s.ruleset {
        RulesetStatus::FullyEnforced => "confined by Landlock",
        RulesetStatus::PartiallyEnforced => "partly confined by Landlock (an older kernel)",
        RulesetStatus::NotEnforced => "not confined (this kernel has no Landlock)",
    }
}

/// Confines this process: reads only below the system and CUDA folders and `scratch`, writes
/// only to `scratch` and `/dev` (the GPU's device files), no TCP. Irreversible.
pub fn confine(scratch: &Path) -> Result<Confinement, String> {
    // NVRTC (and its builtins) loaded first, wherever it is: a confined process could not open it.
    common::harness::device::nvrtc_present();
    let abi = ABI::V4;
    let err = |e: landlock::RulesetError| format!("cannot set up Landlock: {e}");
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    let ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(err)?
        .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
        .map_err(err)?
        .create()
        .map_err(err)?
        .add_rules(path_beneath_rules(readable(scratch), read))
        .map_err(err)?
        .add_rules(path_beneath_rules([scratch, Path::new("/dev")], all))
        .map_err(err)?;
    let s = ruleset.restrict_self().map_err(err)?;
    let files = status(&s).to_string();
    // TCP is handled from ABI 4 on: where the ruleset is fully enforced, no port is allowed.
    let network = if s.ruleset == RulesetStatus::FullyEnforced {
        "no TCP (Landlock)".to_string()
    } else {
        "not confined (Landlock without network rules)".to_string()
    };
    Ok(Confinement { files, network })
}

/// Limits this process to `memory` bytes of address space and `cpu_seconds` of CPU time (for
/// the compiler: a compile bomb ends with an error instead of the machine's memory).
pub fn limit_resources(memory: u64, cpu_seconds: u64) -> Result<(), String> {
    let set = |resource, value: u64| {
        let lim = libc::rlimit { rlim_cur: value, rlim_max: value };
        // SAFETY: sets a limit of this process from a valid struct.
        if unsafe { libc::setrlimit(resource, &lim) } != 0 {
            return Err(format!("cannot limit resources: {}", std::io::Error::last_os_error()));
        }
        Ok(())
    };
    set(libc::RLIMIT_AS, memory)?;
    set(libc::RLIMIT_CPU, cpu_seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In a child process (a confined test must not confine the test runner): after
    /// `confine`, a file outside the allowed folders cannot be read, one inside can.
    #[test]
    fn confined_children_cannot_read_outside() {
        if std::env::var_os("GRADER_CONFINE_TEST").is_some() {
            return;
        }
        let home = std::env::temp_dir().join(format!("grader-confine-{}", std::process::id()));
        let scratch = home.join("scratch");
        std::fs::create_dir_all(&scratch).unwrap();
        let secret = home.join("hidden.txt");
        std::fs::write(&secret, "SECRET").unwrap();
        std::fs::write(scratch.join("mine.cu"), "mine").unwrap();
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args(["--exact", "confine::tests::probe_child", "--nocapture", "--include-ignored"])
            .env("GRADER_CONFINE_TEST", &scratch)
            .env("GRADER_SECRET", &secret)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        let _ = std::fs::remove_dir_all(&home);
        assert!(out.status.success(), "{text}");
        println!("{}", text.lines().find(|l| l.contains("PROBE:")).unwrap_or_default());
        assert!(text.contains("PROBE:"), "{text}");
        if !text.contains("not confined") {
            assert!(
                text.contains("secret=denied") && text.contains("own=ok") && text.contains("parent-environ=denied"),
                "{text}"
            );
        }
    }

    #[test]
    #[ignore = "run by confined_children_cannot_read_outside in a child process"]
    fn probe_child() {
        let scratch = PathBuf::from(std::env::var_os("GRADER_CONFINE_TEST").unwrap());
        let secret = PathBuf::from(std::env::var_os("GRADER_SECRET").unwrap());
        let c = confine(&scratch).unwrap();
        let secret = if std::fs::read(&secret).is_ok() { "readable" } else { "denied" };
        let own = if std::fs::read(scratch.join("mine.cu")).is_ok() { "ok" } else { "denied" };
        let parent = std::fs::read(format!("/proc/{}/environ", std::os::unix::process::parent_id()));
        println!(
            "PROBE: {} secret={secret} own={own} parent-environ={}",
            c.describe(),
            if parent.is_ok() { "readable" } else { "denied" }
        );
    }
}
