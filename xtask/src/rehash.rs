//! `cargo xtask rehash --from REV`: a step's recorded hash covers the headers its kernel includes
//! (the shared ones and those of step crates), so an edit to a part of a header the kernel never
//! uses (a comment, code moved to another header) makes its results stale though the GPU would run
//! the same instructions. For each
//! stale step of a sweep (`results/*.json`) and each stale top rung of a references file
//! (`results/references/*.json`) this compiles the kernel as it was at REV and as it is now, in
//! every variant the step launches, and where every CUBIN holds the same machine code (every
//! section but the debug line tables, byte for byte) it records today's hash with the old one
//! beside it (`rehashed` in that file). A step whose machine code changed is left stale: it needs
//! `cargo xtask sweep` (a top rung `cargo xtask references`) on a GPU, unless `--drop-changed`:
//! where the machine code changed at some of the recorded shapes only (a rule that launches the
//! kernel otherwise there), those shapes' figures are dropped, to time again with `--merge`, and the
//! others kept under today's hash. A profile, one launch at one shape, is compared in that launch's
//! variant alone. Needs git and NVRTC, no GPU.

use crate::results::{Rehash, read, write};
use common::harness::compile::{HEADERS, KernelSource};
use std::collections::HashMap;
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
    /// Where a kernel's machine code changed at some of its recorded shapes only, drop those
    /// shapes' figures (to time again with `--merge`) and keep the others
    #[arg(long)]
    drop_changed: bool,
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

/// The sources at the commit the recorded results were measured from: its id, the name the user
/// gave it, and the texts of the headers read so far.
struct Then<'r> {
    root: &'r Path,
    commit: String,
    from: String,
    texts: HashMap<&'static str, String>,
    drop_changed: bool,
}

impl Then<'_> {
    /// The headers served with `kernel`, as (name, text) at the commit (empty where a file did not
    /// exist then: no kernel of that commit included it).
    fn headers(&mut self, kernel: &KernelSource) -> Vec<(&'static str, String)> {
        HEADERS
            .iter()
            .chain(kernel.headers)
            .map(|h| {
                let text = self
                    .texts
                    .entry(h.path)
                    .or_insert_with(|| git_show(self.root, &self.commit, h.path).unwrap_or_default());
                (h.name, text.clone())
            })
            .collect()
    }

    /// The rehash of one recorded kernel hash: None where `recorded` is today's hash; an error
    /// where the step is gone, its results were not measured from the commit's sources, or its
    /// machine code changed (for `shapes`, those of its recorded runs, and the suite's; its
    /// partial rungs' too).
    /// `only`: compare the variants of `shapes` alone (a profile's one launch), not every variant.
    fn rehash(
        &mut self,
        id: &str,
        recorded: &str,
        shapes: &[common::Shape],
        only: bool,
    ) -> Result<Option<Rehash>, String> {
        let Some(step) = steps::by_id(id) else {
            return Err(format!("{id}: not a step of the registry"));
        };
        let now = step.kernel.hash();
        if recorded == now {
            return Ok(None);
        }
        let from = &self.from;
        let Some(code) = git_show(self.root, &self.commit, &step.kernel.name) else {
            return Err(format!("{id}: no {} at {from}", step.kernel.name));
        };
        let old = step.kernel.with_code(step.kernel.name.clone(), code);
        let texts = self.headers(&step.kernel);
        let headers: Vec<(&str, &str)> = texts.iter().map(|(n, t)| (*n, t.as_str())).collect();
        // Hashes recorded before a header's own includes counted cover the headers the kernel names.
        let named: Vec<(&str, &str)> =
            headers.iter().filter(|(n, _)| old.code.contains(&format!("#include \"{n}\""))).copied().collect();
        if old.hash_with(&headers) != recorded && old.hash_with(&named) != recorded {
            return Err(format!("{id}: its results were not measured from {}'s sources", self.from));
        }
        use common::tools::testing::{same_machine_code, same_machine_code_at};
        let same = |s: &common::Step| match only {
            true => same_machine_code_at(s, &old, &headers, shapes),
            false => same_machine_code(s, &old, &headers, shapes),
        };
        // Every variant, the partial rungs' too; or with --drop-changed, shape by shape, keeping
        // those whose variants compile as they did.
        let whole = || -> Result<usize, String> {
            let mut n = same(step)?;
            if !only {
                for partial in step.partials {
                    n += same(&partial.step).map_err(|e| format!("{e} (its partial rung {})", partial.name))?;
                }
            }
            Ok(n)
        };
        let (cubins, dropped) = match whole() {
            Ok(n) => (n, Vec::new()),
            Err(e) if self.drop_changed && !only => {
                let mut distinct: Vec<common::Shape> = Vec::new();
                for s in shapes {
                    if !distinct.contains(s) {
                        distinct.push(*s);
                    }
                }
                let (mut cubins, mut dropped) = (0, Vec::new());
                for s in &distinct {
                    let at = |st: &common::Step| same_machine_code_at(st, &old, &headers, std::slice::from_ref(s));
                    let variants = std::iter::once(step).chain(step.partials.iter().map(|p| &p.step));
                    match variants.map(at).sum::<Result<usize, String>>() {
                        Ok(n) => cubins += n,
                        Err(_) => dropped.push(s.to_string()),
                    }
                }
                if dropped.len() == distinct.len() {
                    return Err(e);
                }
                dropped.sort();
                if !dropped.is_empty() {
                    println!("{id}: other machine code at {}: their figures dropped", dropped.join(", "));
                }
                (cubins, dropped)
            }
            Err(e) => return Err(e),
        };
        println!("{id}: the same machine code in {cubins} CUBINs as at {}: hash {recorded} -> {now}", self.from);
        Ok(Some(Rehash {
            step: id.to_string(),
            from: recorded.to_string(),
            commit: self.commit.clone(),
            to: now,
            cubins,
            date: crate::sweep::today(),
            dropped,
        }))
    }
}

pub fn run(args: Args) -> Result<(), String> {
    let root = crate::bundle::root();
    let commit = git(&root, &["rev-parse", "--verify", &format!("{}^{{commit}}", args.from)])
        .map(|c| c.trim().to_string())
        .ok_or_else(|| format!("{} is not a commit of {}", args.from, root.display()))?;
    let mut then =
        Then { root: &root, commit, from: args.from.clone(), texts: HashMap::new(), drop_changed: args.drop_changed };
    let shape = |(m, n, k): (u64, u64, u64)| common::Shape::new(m as usize, n as usize, k as usize);
    let mut tally = Tally::default();
    // The sweeps (results/*.json), and with --results only that file.
    let files = match &args.results {
        Some(f) => vec![f.clone()],
        None => {
            // The partial rungs' sweeps are sweeps too (results/partials/*.json).
            let partials = crate::results::json_files(&root.join("results/partials")).unwrap_or_default();
            crate::results::files(&root)?.into_iter().chain(partials).collect()
        }
    };
    for file in files {
        let mut sweep = read(&file)?;
        let runs: Vec<_> = sweep.runs.iter().chain(&sweep.partials).map(|r| (r.step.clone(), r.shape())).collect();
        let shapes = |id: &str| runs.iter().filter(|(s, _)| s == id).map(|(_, mnk)| shape(*mnk)).collect();
        let before = sweep.rehashed.len();
        if tally.file(&mut then, (&mut sweep.kernel_hashes, &mut sweep.rehashed), shapes, false) {
            let moved = sweep.rehashed[before..].to_vec();
            for r in &moved {
                let gone = |run: &crate::results::Run| {
                    run.step == r.step && r.dropped.contains(&shape(run.shape()).to_string())
                };
                sweep.runs.retain(|run| !gone(run));
                sweep.partials.retain(|run| !gone(run));
            }
            write(&file, &sweep)?;
            println!("wrote {}", file.display());
        }
    }
    // The references of the top rungs (results/references/*.json), which name their rungs' hashes too.
    for file in if args.results.is_some() { Vec::new() } else { crate::references::files(&root) } {
        let mut refs: crate::references::References = crate::results::read_json(&file)?;
        let rows = &refs.rows;
        let shapes = |id: &str| rows.iter().filter(|r| r.who == id).map(|r| shape((r.m, r.n, r.k))).collect();
        let before = refs.rehashed.len();
        if tally.file(&mut then, (&mut refs.kernel_hashes, &mut refs.rehashed), shapes, false) {
            let moved = refs.rehashed[before..].to_vec();
            for r in &moved {
                refs = crate::references::drop_shapes(&refs, &r.step, &r.dropped)?;
            }
            crate::references::write(&file, &refs)?;
            println!("wrote {}", file.display());
        }
    }
    // The profiles (results/profiles/<gpu>/<id>.csv): one launch each at the step's profile
    // shape (4096³ but for step 15), its hash on a `# kernel:` line.
    if args.results.is_none() {
        let at = |id: &str| steps::by_id(id).map_or(common::Shape::cube(4096), crate::book::profiles::shape_of);
        for (file, id, recorded) in profiles(&root)? {
            let mut hashes = std::collections::BTreeMap::from([(id, recorded)]);
            let mut chain = Vec::new();
            // A profile is one launch at one shape: the variants of the other shapes may change.
            if tally.file(&mut then, (&mut hashes, &mut chain), |id| vec![at(id)], true) {
                let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
                let (_, now) = hashes.into_iter().next().unwrap_or_default();
                // The kernel line follows; a line after it says what the new hash stands for.
                let moved = chain
                    .iter()
                    .map(|r| format!("# rehashed: {} -> {} (the same machine code as at {})", r.from, r.to, r.commit));
                let mut lines: Vec<String> = Vec::new();
                for l in text.lines() {
                    if l.starts_with("# kernel: ") {
                        lines.push(format!("# kernel: {now}"));
                        lines.extend(moved.clone());
                    } else {
                        lines.push(l.to_string());
                    }
                }
                let text = lines;
                std::fs::write(&file, text.join("\n") + "\n").map_err(|e| format!("{}: {e}", file.display()))?;
                println!("wrote {}", file.display());
            }
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
        then: &mut Then<'_>,
        (hashes, rehashed): (&mut std::collections::BTreeMap<String, String>, &mut Vec<Rehash>),
        shapes: impl Fn(&str) -> Vec<common::Shape>,
        only: bool,
    ) -> bool {
        let mut moved = false;
        for (id, recorded) in hashes.clone() {
            match then.rehash(&id, &recorded, &shapes(&id), only) {
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

/// Every recorded profile, as (file, registry id, recorded kernel hash).
fn profiles(root: &Path) -> Result<Vec<(std::path::PathBuf, String, String)>, String> {
    let mut out = Vec::new();
    let Ok(gpus) = std::fs::read_dir(root.join("results/profiles")) else { return Ok(out) };
    for gpu in gpus.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
        for file in crate::results::files_with(&gpu, "csv").map_err(|e| format!("{}: {e}", gpu.display()))? {
            let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            let Some(hash) = text.lines().find_map(|l| l.strip_prefix("# kernel: ")) else { continue };
            let id = file.file_stem().unwrap_or_default().to_string_lossy().into_owned();
            out.push((file.clone(), id, hash.trim().to_string()));
        }
    }
    Ok(out)
}
