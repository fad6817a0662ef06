//! `cargo xtask rehash --from REV`: a step's recorded hash covers the shared headers its kernel
//! includes, so an edit to a part of a header the kernel never uses (another step's schedule, a
//! comment) makes its results stale though the GPU would run the same instructions. For each
//! stale step this compiles the kernel as it was at REV and as it is now, in every variant the
//! step launches, and where every CUBIN holds the same machine code (every section but the debug
//! line tables, byte for byte) it records today's hash with the old one beside it (`rehashed` in
//! the results file). A step whose machine code changed is
//! left stale: it needs `cargo xtask sweep` on a GPU. Needs git and NVRTC, no GPU.

use crate::results::{Rehash, read, write};
use common::compile::{HEADERS, KernelSource};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(clap::Args)]
pub struct Args {
    /// The commit whose sources the recorded results were swept from
    #[arg(long, value_name = "REV")]
    from: String,
    /// The results file (default: every file in results/)
    #[arg(long)]
    results: Option<PathBuf>,
}

/// What `git -C root ARGS` prints, or None where it fails.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(root).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A file as it was at `commit`, or None where it did not exist.
fn git_show(root: &Path, commit: &str, path: &str) -> Option<String> {
    git(root, &["show", &format!("{commit}:{path}")])
}

pub fn run(args: Args) -> Result<(), String> {
    let root = crate::bundle::root();
    let commit = git(&root, &["rev-parse", "--verify", &format!("{}^{{commit}}", args.from)])
        .map(|c| c.trim().to_string())
        .ok_or_else(|| format!("{} is not a commit of {}", args.from, root.display()))?;
    let files = match args.results {
        Some(f) => vec![f],
        None => crate::results::files(&root)?,
    };
    let headers: Vec<(&str, String)> = HEADERS
        .iter()
        .map(|(name, _)| (*name, git_show(&root, &commit, &format!("common/include/{name}")).unwrap_or_default()))
        .collect();
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let (mut left, mut stale) = (Vec::new(), 0);
    for file in files {
        let mut sweep = read(&file)?;
        let mut changed = false;
        for step in steps::ALL {
            let id = step.id();
            let Some(recorded) = sweep.kernel_hashes.get(&id).cloned() else { continue };
            let now = step.kernel.hash();
            if recorded == now {
                continue;
            }
            stale += 1;
            let Some(code) = git_show(&root, &commit, &step.kernel.name) else {
                left.push(format!("{id}: no {} at {}", step.kernel.name, args.from));
                continue;
            };
            let old = KernelSource { name: step.kernel.name.clone(), code: code.into() };
            if old.hash_with(&headers) != recorded {
                left.push(format!("{id}: its results were not swept from {}'s sources", args.from));
                continue;
            }
            // The variants of the recorded runs, as well as those of the suite's shapes.
            let shapes: Vec<common::Shape> = sweep
                .runs
                .iter()
                .filter(|r| r.step == id)
                .map(|r| common::Shape::new(r.m as usize, r.n as usize, r.k as usize))
                .collect();
            match common::testing::same_machine_code(step, &old, &headers, &shapes) {
                Ok(cubins) => {
                    println!(
                        "{id}: the same machine code in {cubins} CUBINs as at {}: hash {recorded} -> {now}",
                        args.from
                    );
                    // Appended: a second rehash of a step extends the chain back to its sweep.
                    sweep.rehashed.push(Rehash {
                        step: id.clone(),
                        from: recorded,
                        commit: commit.clone(),
                        to: now.clone(),
                        cubins,
                        date: crate::sweep::today(),
                    });
                    sweep.kernel_hashes.insert(id, now);
                    changed = true;
                }
                Err(e) => left.push(e),
            }
        }
        if changed {
            write(&file, &sweep)?;
            println!("wrote {}", file.display());
        }
    }
    if stale == 0 {
        println!("every recorded hash is today's: nothing to compare");
    }
    if left.is_empty() { Ok(()) } else { Err(format!("still stale, to sweep on a GPU:\n  {}", left.join("\n  "))) }
}
