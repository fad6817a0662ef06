//! `cargo xtask rehash --from REV`: a step's recorded hash covers the shared headers its kernel
//! includes, so an edit to a part of a header the kernel never uses (another step's schedule, a
//! comment) makes its results stale though the GPU would run the same instructions. For each
//! stale step of a sweep (`results/*.json`) and each stale top rung of a references file
//! (`results/references/*.json`) this compiles the kernel as it was at REV and as it is now, in
//! every variant the step launches, and where every CUBIN holds the same machine code (every
//! section but the debug line tables, byte for byte) it records today's hash with the old one
//! beside it (`rehashed` in that file). A step whose machine code changed is left stale: it needs
//! `cargo xtask sweep` (a top rung `cargo xtask references`) on a GPU. Needs git and NVRTC, no GPU.

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

/// The rehash of one recorded kernel hash: None where `recorded` is today's hash; an error where
/// the step is gone, its results were not measured from `commit`'s sources, or its machine code
/// changed (for `shapes`, those of its recorded runs, and the suite's).
fn rehash(
    root: &Path,
    (commit, from): (&str, &str),
    headers: &[(&str, &str)],
    id: &str,
    recorded: &str,
    shapes: &[common::Shape],
) -> Result<Option<Rehash>, String> {
    let Some(step) = steps::by_id(id) else {
        return Err(format!("{id}: not a step of the registry"));
    };
    let now = step.kernel.hash();
    if recorded == now {
        return Ok(None);
    }
    let Some(code) = git_show(root, commit, &step.kernel.name) else {
        return Err(format!("{id}: no {} at {from}", step.kernel.name));
    };
    let old = KernelSource { name: step.kernel.name.clone(), code: code.into() };
    if old.hash_with(headers) != recorded {
        return Err(format!("{id}: its results were not measured from {from}'s sources"));
    }
    let cubins = common::testing::same_machine_code(step, &old, headers, shapes)?;
    println!("{id}: the same machine code in {cubins} CUBINs as at {from}: hash {recorded} -> {now}");
    Ok(Some(Rehash {
        step: id.to_string(),
        from: recorded.to_string(),
        commit: commit.to_string(),
        to: now,
        cubins,
        date: crate::sweep::today(),
    }))
}

pub fn run(args: Args) -> Result<(), String> {
    let root = crate::bundle::root();
    let commit = git(&root, &["rev-parse", "--verify", &format!("{}^{{commit}}", args.from)])
        .map(|c| c.trim().to_string())
        .ok_or_else(|| format!("{} is not a commit of {}", args.from, root.display()))?;
    let revs = (commit.as_str(), args.from.as_str());
    let headers: Vec<(&str, String)> = HEADERS
        .iter()
        .map(|(name, _)| (*name, git_show(&root, &commit, &format!("common/include/{name}")).unwrap_or_default()))
        .collect();
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let shape = |(m, n, k): (u64, u64, u64)| common::Shape::new(m as usize, n as usize, k as usize);
    let mut tally = Tally::default();
    // The sweeps (results/*.json), and with --results only that file.
    let files = match &args.results {
        Some(f) => vec![f.clone()],
        None => crate::results::files(&root)?,
    };
    for file in files {
        let mut sweep = read(&file)?;
        let runs = &sweep.runs;
        let shapes = |id: &str| runs.iter().filter(|r| r.step == id).map(|r| shape((r.m, r.n, r.k))).collect();
        if tally.file(&root, revs, &headers, (&mut sweep.kernel_hashes, &mut sweep.rehashed), shapes) {
            write(&file, &sweep)?;
            println!("wrote {}", file.display());
        }
    }
    // The references of the top rungs (results/references/*.json), which name their rungs' hashes too.
    for file in if args.results.is_some() { Vec::new() } else { crate::references::files(&root) } {
        let mut refs: crate::references::References = crate::results::read_json(&file)?;
        let rows = &refs.rows;
        let shapes = |id: &str| rows.iter().filter(|r| r.who == id).map(|r| shape((r.m, r.n, r.k))).collect();
        if tally.file(&root, revs, &headers, (&mut refs.kernel_hashes, &mut refs.rehashed), shapes) {
            crate::references::write(&file, &refs)?;
            println!("wrote {}", file.display());
        }
    }
    let Tally { stale, left } = tally;
    if stale == 0 {
        println!("every recorded hash is today's: nothing to compare");
    }
    if left.is_empty() {
        Ok(())
    } else {
        Err(format!("still stale, to measure again on a GPU:\n  {}", left.join("\n  ")))
    }
}

/// The stale hashes met so far, and those left for a GPU.
#[derive(Default)]
struct Tally {
    stale: usize,
    left: Vec<String>,
}

impl Tally {
    /// Rehashes one file's stale `hashes` (the shapes of each kernel's recorded runs from
    /// `shapes`), appending each to the file's chain `rehashed` (a second rehash of a kernel
    /// extends the chain back to its measurement); those that cannot move are left. Whether any
    /// moved.
    fn file(
        &mut self,
        root: &Path,
        revs: (&str, &str),
        headers: &[(&str, &str)],
        (hashes, rehashed): (&mut std::collections::BTreeMap<String, String>, &mut Vec<Rehash>),
        shapes: impl Fn(&str) -> Vec<common::Shape>,
    ) -> bool {
        let mut moved = false;
        for (id, recorded) in hashes.clone() {
            match rehash(root, revs, headers, &id, &recorded, &shapes(&id)) {
                Ok(None) => continue,
                Ok(Some(r)) => {
                    hashes.insert(id, r.to.clone());
                    rehashed.push(r);
                    moved = true;
                }
                Err(e) => self.left.push(e),
            }
            self.stale += 1;
        }
        moved
    }
}
