//! `cargo xtask sweep [--out FILE] [--steps 01,05] [--shapes 1024,4096x11008x4096] [--partials]`:
//! runs every step and cuBLAS on a sweep of shapes on the GPU, verifies every run, and writes one
//! results file per GPU model (`results/<gpu>.json`) that the book's tables and charts are made
//! from; with `--partials`, also the partial rungs of the swept steps (each with one idea left out).

use crate::results::{GpuRecord, Rehash, Run, SCHEMA, Sweep, write};
use common::harness::compile::nvrtc_version;
use common::harness::device::{Gpu, sync};
use common::harness::matrix::DeviceMatrix;
use common::harness::runner::Runner;
use common::timing::clocks::Watch;
use common::timing::lt::{CublasConfig, CublasLt, compare};
use common::timing::runs::{Method, TimingPlan, time_runs};
use common::verify::check::Prepared;
use common::verify::reference::{CUBLAS_MATH, Cublas};
use common::{Gemm, Precision, Shape, Step, harness::data};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The decode shapes (`--decode`): M = 1 to 256 rows of activations against a layer's weights,
/// (N, K) = (11008, 4096), (4096, 11008) and (4096, 4096), the shapes step 15 is measured on.
pub fn decode_shapes() -> Vec<Shape> {
    let layers = [(11008, 4096), (4096, 11008), (4096, 4096)];
    layers.into_iter().flat_map(|(n, k)| [1, 8, 16, 32, 64, 128, 256].map(|m| Shape::new(m, n, k))).collect()
}

/// Square sizes of the sweep, and shapes from real workloads: a transformer MLP layer
/// (4096 tokens, hidden 4096, middle 11008), decode-like skinny products (M = 16 tokens), and an
/// odd shape that exercises every edge path.
pub fn default_shapes() -> Vec<Shape> {
    let mut v: Vec<Shape> = [128, 256, 512, 1024, 2048, 4096, 8192].into_iter().map(Shape::cube).collect();
    v.extend([
        Shape::new(4096, 11008, 4096),
        Shape::new(16, 11008, 4096),
        Shape::new(16, 4096, 4096),
        Shape::new(1000, 1001, 999),
    ]);
    v
}

/// `shapes`, then the decode shapes if `decode`; `default` where neither names any.
pub fn with_decode(mut shapes: Vec<Shape>, decode: bool, default: fn() -> Vec<Shape>) -> Vec<Shape> {
    if decode {
        shapes.extend(decode_shapes().into_iter().filter(|s| !shapes.contains(s)).collect::<Vec<_>>());
    }
    if shapes.is_empty() { default() } else { shapes }
}

/// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3".
pub fn slug(name: &str) -> String {
    common::harness::names::slug(name, &[])
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
pub fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[derive(clap::Args)]
pub struct Args {
    /// The results file (default: results/<gpu>.json)
    #[arg(long)]
    out: Option<PathBuf>,
    /// Steps to run, comma-separated ids, crate names or numbers (a number names every
    /// precision of a step); default: all
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    steps: Vec<String>,
    /// Shapes, comma-separated MxNxK or S; default: the sweep's squares and workload shapes
    #[arg(long, value_delimiter = ',', value_name = "LIST", value_parser = crate::shape)]
    shapes: Vec<Shape>,
    /// The decode shapes (M = 1 to 256 at three layers' N and K), after --shapes or alone
    #[arg(long)]
    decode: bool,
    /// Keep the recorded runs from the existing results file (each with the date it was
    /// measured), replacing only the steps swept now at the shapes swept now (a swept step's
    /// other shapes are kept while its kernel's hash is unchanged): for a re-sweep of changed
    /// kernels, a few shapes at a time
    #[arg(long)]
    merge: bool,
    /// Sweep the partial rungs of the swept steps too, each a rung with one of its ideas left out
    /// (step 11 without multicast, ...), into the file's `partials`
    #[arg(long)]
    partials: bool,
    /// Add to --out the runs this other copy of it timed since (those it holds otherwise, by step,
    /// partial rung and shape) and stop, with no GPU: for a sweep merged into a copy of the file
    #[arg(long, value_name = "FILE", requires = "out")]
    take: Option<PathBuf>,
    /// Drop from --out the runs whose launch the registry now gives otherwise (a rule changed, not
    /// a kernel, so no hash says so) and stop, with no GPU: `--merge` times them again
    #[arg(long, requires = "out", conflicts_with_all = ["merge", "take"])]
    void_moved: bool,
}

/// Device-to-device copy bandwidth, bytes read plus bytes written per second (median of 10).
fn copy_bandwidth(gpu: &Gpu) -> common::Result<f64> {
    let n = 256 << 20; // 1 GiB of f32 each way
    let src = DeviceMatrix::from_host(gpu, &vec![1.0f32; n])?;
    let mut dst = DeviceMatrix::from_host(gpu, &vec![0.0f32; n])?;
    let plan = TimingPlan {
        settle: Duration::from_millis(50),
        measure: Duration::ZERO,
        rounds: 1,
        min_reps: 10,
        max_reps: 10,
        method: Method::OneAtATime,
    };
    let t = time_runs(gpu, plan, || Ok(gpu.stream.memcpy_dtod(&src.data, &mut dst.data)?))?;
    Ok(2.0 * (n * 4) as f64 / (t.median_ms * 1e-3))
}

/// What a sweep measures: a registry entry, or one of its partial rungs (by name).
#[derive(Clone, Copy)]
struct Swept {
    step: &'static Step,
    partial: Option<&'static str>,
}

impl Swept {
    fn label(&self) -> String {
        self.partial.map_or_else(|| self.step.id(), |p| format!("{} {p}", self.step.id()))
    }

    /// Whether a recorded run is one of this.
    fn measured(&self, r: &Run) -> bool {
        r.step == self.step.id() && r.partial.as_deref() == self.partial
    }
}

/// The entries `keys` names (default: the registry), each followed, with `partials`, by its
/// partial rungs.
fn swept(keys: &[String], partials: bool) -> Result<Vec<Swept>, String> {
    let mut steps: Vec<&'static Step> = Vec::new();
    for key in keys.iter().map(|k| k.trim()).filter(|k| !k.is_empty()) {
        let picked = steps::variants(key);
        if picked.is_empty() {
            crate::step_key(key)?;
        }
        steps.extend(picked);
    }
    if steps.is_empty() {
        steps = steps::ALL.iter().collect();
    }
    let of = |s: &'static Step| {
        let parts = s.partials.iter().filter(move |_| partials);
        std::iter::once(Swept { step: s, partial: None })
            .chain(parts.map(|p| Swept { step: &p.step, partial: Some(p.name) }))
    };
    Ok(steps.into_iter().flat_map(of).collect())
}

/// What a results file keeps from the one it replaces: the runs and partial runs recorded before
/// (each with the date it was measured), the kernel hashes they were measured with, and the
/// rehashes that vouch for them.
#[derive(Default)]
struct Kept {
    runs: Vec<Run>,
    partials: Vec<Run>,
    hashes: BTreeMap<String, String>,
    rehashed: Vec<Rehash>,
}

/// With --merge, what `out` keeps: the runs of the entries this sweep leaves out, and those of a
/// swept entry at the shapes it leaves out (a long sweep can be run a few shapes at a time); of a
/// swept step whose kernel changed, none (its partial rungs' neither); of a step or partial rung the
/// registry no longer has, none.
fn kept(out: &Path, swept: &[Swept], shapes: &[Shape]) -> Result<Kept, String> {
    let old = crate::results::read(out)?;
    let changed = |id: &str| {
        swept.iter().any(|s| s.step.id() == id)
            && old.kernel_hashes.get(id) != steps::by_id(id).map(|s| s.kernel.hash()).as_ref()
    };
    let replaced = |r: &Run| {
        swept.iter().any(|s| s.measured(r)) && shapes.iter().any(|s| (s.m as u64, s.n as u64, s.k as u64) == r.shape())
    };
    let in_registry = |r: &Run| {
        let partial = |s: &Step| r.partial.as_deref().is_none_or(|p| s.partials.iter().any(|x| x.name == p));
        steps::by_id(&r.step).is_some_and(partial)
    };
    let keep = |runs: &[Run]| -> Vec<Run> {
        let dated = |r: &Run| Run { date: Some(r.date.clone().unwrap_or_else(|| old.date.clone())), ..r.clone() };
        runs.iter().filter(|r| !changed(&r.step) && !replaced(r) && in_registry(r)).map(dated).collect()
    };
    let (runs, partials) = (keep(&old.runs), keep(&old.partials));
    println!("merging: {} recorded runs kept from {}", runs.len() + partials.len(), out.display());
    Ok(Kept { runs, partials, hashes: old.kernel_hashes, rehashed: old.rehashed })
}

fn gpu_record(gpu: &Gpu, copy: f64) -> GpuRecord {
    GpuRecord {
        name: gpu.name.clone(),
        compute_capability: format!("{}.{}", gpu.cc.0, gpu.cc.1),
        driver_cuda_version: format!("{}.{}", gpu.driver_version / 1000, (gpu.driver_version % 1000) / 10),
        sms: gpu.sms,
        sm_clock_khz: gpu.clock_khz,
        l2_bytes: gpu.l2_bytes as u64,
        peak_fp32_gflops: gpu.peak_fp32_flops() / 1e9,
        peak_dram_gbs: gpu.peak_dram_bytes() / 1e9,
        measured_copy_gbs: copy / 1e9,
    }
}

/// The GPU, cuBLAS and the timing plan every run of a sweep shares, when it started, and whether
/// it said why the GPU's clock is not recorded (once is enough).
struct Bench {
    gpu: Arc<Gpu>,
    cublas: Cublas,
    lt: CublasLt,
    plan: TimingPlan,
    started: Instant,
    said_no_clock: bool,
}

/// What the runs at one shape share: one prepared problem (inputs, cuBLAS and CPU references)
/// per precision, its cuBLAS configurations (FP16, BF16, TF32) checked once on it, and those that
/// computed something else on it (never timed).
struct AtShape {
    gemm: Gemm,
    seed: u64,
    prepared: HashMap<Precision, Prepared>,
    checked: HashSet<Precision>,
    left_out: HashMap<Precision, Vec<CublasConfig>>,
}

impl AtShape {
    fn new(shape: Shape) -> AtShape {
        let (prepared, checked, left_out) = Default::default();
        AtShape { gemm: Gemm::new(shape, 1.0, 0.0), seed: data::fresh_seed(), prepared, checked, left_out }
    }
}

/// One verified and timed run, printed as a line after `progress`.
fn measure(b: &mut Bench, at: &mut AtShape, swept: Swept, progress: &str) -> Result<Run, String> {
    let e = |e: common::Error| e.to_string();
    let (step, gemm) = (swept.step, at.gemm);
    let prepared = match at.prepared.entry(step.precision) {
        Entry::Occupied(o) => o.into_mut(),
        Entry::Vacant(v) => v.insert(Prepared::new(&b.gpu, &b.cublas, &gemm, step.precision, at.seed).map_err(e)?),
    };
    let mut runner = Runner::new(&b.gpu, step, None).map_err(e)?;
    let launch = runner.launch_for(&gemm.shape).map_err(e)?;
    let resources = runner.load(&launch).map_err(e)?.resources;
    let verified = prepared.check(&mut runner).map_err(e)?;
    // The kernel, cuBLAS and (tensor-core precisions) cuBLAS's other configurations, in turn: the
    // GPU's clock drifts over seconds of tensor-core work, and the same configuration timed a few
    // seconds before the kernel was up to 10% faster than timed next to it (notes/measuring.md,
    // "cuBLAS timed next to each kernel").
    let check = at.checked.insert(step.precision);
    let left_out = at.left_out.entry(step.precision).or_default();
    let watch = Watch::start(&b.gpu);
    let (cmp, timed) = compare(&mut runner, &b.cublas, &mut b.lt, prepared, b.plan, check, left_out).map_err(e)?;
    let clocks = watch.stop();
    sync(&b.gpu, step.name).map_err(e)?;
    let passed = verified.passed();
    let fastest = common::timing::lt::fastest(&timed);
    let of_fastest = fastest.map_or(String::new(), |(_, t)| {
        format!(" ({:.1}% of the fastest)", 100.0 * t.median_ms / cmp.kernel.median_ms)
    });
    println!(
        "{progress} {:<26} {:<16} {:>9.3} ms {:>8.0} GFLOP/s {:>6.1}% of cuBLAS{of_fastest}  err {:.1e}  {}  ({:.0} s)",
        swept.label(),
        gemm.shape.to_string(),
        cmp.kernel.median_ms,
        cmp.kernel.gflops(&gemm),
        100.0 * cmp.ratio(),
        verified.vs_cpu.rel_frobenius,
        if passed { "ok" } else { "FAILED" },
        b.started.elapsed().as_secs_f64()
    );
    if !passed {
        println!("{}", verified.report(&swept.label()));
    }
    match &clocks {
        Ok(c) if c.held_back().is_some() => println!("        the GPU was held back: {}", c.describe()),
        Err(why) if !b.said_no_clock => {
            println!("        the GPU's clock is not recorded: {why}");
            b.said_no_clock = true;
        }
        _ => {}
    }
    Ok(Run {
        date: None,
        step: step.id(),
        partial: swept.partial.map(str::to_string),
        precision: step.precision.label().into(),
        m: gemm.shape.m as u64,
        n: gemm.shape.n as u64,
        k: gemm.shape.k as u64,
        alpha: gemm.alpha as f64,
        beta: gemm.beta as f64,
        seed: at.seed,
        passed,
        time_ms: cmp.kernel.median_ms,
        min_ms: cmp.kernel.min_ms,
        reps: cmp.kernel.reps as u64,
        gflops: cmp.kernel.gflops(&gemm),
        cublas_ms: cmp.cublas.median_ms,
        cublas_gflops: cmp.cublas.gflops(&gemm),
        pct_of_cublas: 100.0 * cmp.ratio(),
        // FP16, BF16, TF32: every cuBLAS configuration, and the kernel against the fastest.
        cublas_configs: timed.iter().map(|(c, t)| (c.label().to_string(), t.gflops(&gemm))).collect(),
        fastest_cublas: fastest.map(|(c, _)| c.label().to_string()),
        fastest_cublas_gflops: fastest.map(|(_, t)| t.gflops(&gemm)),
        pct_of_fastest_cublas: fastest.map(|(_, t)| 100.0 * t.median_ms / cmp.kernel.median_ms),
        rel_err_vs_cpu: verified.vs_cpu.rel_frobenius,
        rel_err_vs_cublas: verified.vs_cublas.rel_frobenius,
        // FP16, BF16 and TF32: the error against the exact product of the unrounded FP32 inputs.
        rel_err_vs_exact: verified.vs_exact.as_ref().map_or(verified.vs_cpu.rel_frobenius, |x| x.rel_frobenius),
        worst_elem_ratio_vs_cpu: verified.vs_cpu.worst_ratio,
        registers: resources.registers,
        static_smem_bytes: resources.smem_bytes,
        dynamic_smem_bytes: launch.dynamic_smem_bytes,
        local_bytes: resources.stack_bytes,
        spill_bytes: resources.spills(),
        threads_per_block: launch.threads_per_block(),
        grid: [launch.grid.0, launch.grid.1, launch.grid.2],
        defines: crate::results::define_list(&launch),
        clocks: clocks.ok(),
    })
}

/// `--take`: `file` with the runs of `other` that it holds otherwise (or not at all), each in
/// place of the file's run of the same step, partial rung and shape, and those steps' hashes. A
/// step whose hash differs between the two must have all of its runs in the file taken.
fn taken(mut file: Sweep, other: &Sweep) -> Result<Sweep, String> {
    let key = |r: &Run| (r.step.clone(), r.partial.clone(), r.shape());
    let text = |r: &Run| serde_json::to_string(&Run { date: None, ..r.clone() }).unwrap_or_default();
    let holds = |f: &Sweep, r: &Run| f.runs.iter().chain(&f.partials).any(|x| key(x) == key(r) && text(x) == text(r));
    let new: Vec<Run> = other.runs.iter().chain(&other.partials).filter(|r| !holds(&file, r)).cloned().collect();
    let stale = |x: &&Run| {
        new.iter().any(|r| r.step == x.step)
            && !new.iter().any(|r| key(r) == key(x))
            && other.kernel_hashes.get(&x.step) != file.kernel_hashes.get(&x.step)
    };
    if let Some(x) = file.runs.iter().chain(&file.partials).find(stale) {
        return Err(format!("{} at {:?}: timed another kernel than the runs taken", x.step, x.shape()));
    }
    for r in &new {
        file.runs.retain(|x| key(x) != key(r));
        file.partials.retain(|x| key(x) != key(r));
        if let Some(hash) = other.kernel_hashes.get(&r.step) {
            file.kernel_hashes.insert(r.step.clone(), hash.clone());
        }
    }
    println!("taking {} runs", new.len());
    for r in new {
        if r.partial.is_some() { file.partials.push(r) } else { file.runs.push(r) }
    }
    Ok(file)
}

/// `--void-moved`: `file` without the runs whose launch the registry now gives otherwise, and what
/// moved in each (`results::moved`).
fn unmoved(mut file: Sweep) -> (Sweep, Vec<String>) {
    let mut gone = Vec::new();
    file.runs.retain(|r| crate::results::moved(&r.step, r.shape(), &r.defines).map(|g| gone.push(g)).is_none());
    (file, gone)
}

pub fn run(Args { out, steps: keys, shapes, decode, merge, partials, take, void_moved }: Args) -> Result<(), String> {
    if let (Some(other), Some(out)) = (&take, &out) {
        let file = taken(crate::results::read(out)?, &crate::results::read(other)?)?;
        return write(out, &file);
    }
    if let (true, Some(out)) = (void_moved, &out) {
        let (file, gone) = unmoved(crate::results::read(out)?);
        for g in &gone {
            println!("dropped {g}");
        }
        println!("{}: dropped {} runs whose launch moved (`--merge` times them again)", out.display(), gone.len());
        return write(out, &file);
    }
    let swept = swept(&keys, partials)?;
    let shapes = with_decode(shapes, decode, default_shapes);
    let e = |e: common::Error| e.to_string();
    let gpu = Gpu::shared().map_err(e)?;
    let (cublas, lt) = (Cublas::new(&gpu).map_err(e)?, CublasLt::new(&gpu).map_err(e)?);
    let (nv_major, nv_minor) = nvrtc_version().map_err(e)?;
    let out = out.unwrap_or_else(|| PathBuf::from("results").join(format!("{}.json", slug(&gpu.name))));
    let started = Instant::now();
    println!("sweep on {}: {} steps x {} shapes", gpu.describe(), swept.len(), shapes.len());
    let copy = copy_bandwidth(&gpu).map_err(e)?;
    println!("device-to-device copy: {:.0} GB/s (read + write)", copy / 1e9);
    let kept = if merge && out.exists() { kept(&out, &swept, &shapes)? } else { Kept::default() };
    let mut kernel_hashes = kept.hashes.clone();
    kernel_hashes.extend(swept.iter().map(|s| (s.step.id(), s.step.kernel.hash())));
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    // The file is written after every run, so that a sweep stopped by a time limit keeps what it
    // measured (the hashes of the steps it had not reached yet say they are stale).
    let (gpu_record, cublas_version) = (gpu_record(&gpu, copy), cublas.version as i64);
    let save = |runs: &[Run]| {
        let (new_partials, new_runs): (Vec<Run>, Vec<Run>) = runs.iter().cloned().partition(|r| r.partial.is_some());
        let runs: Vec<Run> = kept.runs.iter().cloned().chain(new_runs).collect();
        let partials: Vec<Run> = kept.partials.iter().cloned().chain(new_partials).collect();
        let recorded = |id: &str| runs.iter().chain(&partials).any(|r| r.step == id);
        let sweep = Sweep {
            schema: SCHEMA,
            tool: "cargo xtask sweep".into(),
            date: today(),
            gpu: gpu_record.clone(),
            nvrtc_version: format!("{nv_major}.{nv_minor}"),
            cublas_version,
            cublas_math: CUBLAS_MATH.into(),
            kernel_hashes: kernel_hashes
                .iter()
                .filter(|(id, _)| recorded(id))
                .map(|(i, h)| (i.clone(), h.clone()))
                .collect(),
            // A rehash stays while runs it vouches for are kept (they were all measured before it).
            rehashed: kept
                .rehashed
                .iter()
                .filter(|r| kept.runs.iter().chain(&kept.partials).any(|k| k.step == r.step))
                .cloned()
                .collect(),
            runs,
            partials,
        };
        write(&out, &sweep)
    };
    let plan = TimingPlan {
        settle: Duration::from_millis(100),
        measure: Duration::from_millis(300),
        rounds: 3,
        min_reps: 6,
        max_reps: 100,
        method: Method::OneAtATime,
    };
    let mut bench = Bench { gpu, cublas, lt, plan, started, said_no_clock: false };
    let total = swept.len() * shapes.len();
    let mut runs = Vec::new();
    for (si, shape) in shapes.iter().enumerate() {
        let mut at = AtShape::new(*shape);
        for (ki, s) in swept.iter().enumerate() {
            let progress = format!("[{:>3}/{total}]", si * swept.len() + ki + 1);
            runs.push(measure(&mut bench, &mut at, *s, &progress)?);
            save(&runs)?;
        }
    }
    let failures = runs.iter().filter(|r| !r.passed).count();
    println!(
        "{} runs ({failures} failed) in {:.0} s -> {}",
        runs.len(),
        started.elapsed().as_secs_f64(),
        out.display()
    );
    if failures > 0 {
        return Err(format!("{failures} runs failed verification"));
    }
    // Runs timed while the GPU was slowed for heat or by its board (`common::timing::clocks`).
    let held_back: Vec<String> = runs
        .iter()
        .filter(|r| r.clocks.as_ref().is_some_and(|c| c.held_back().is_some()))
        .map(|r| format!("{} at {}x{}x{}", r.step, r.m, r.n, r.k))
        .collect();
    common::timing::clocks::refuse_held_back(&held_back)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--decode` adds the 21 decode shapes after those named, once each; alone it sweeps them alone.
    #[test]
    fn decode_shapes_join_the_named_ones() {
        let decode = decode_shapes();
        assert_eq!(decode.len(), 21);
        assert!(decode.contains(&Shape::new(1, 11008, 4096)) && decode.contains(&Shape::new(256, 4096, 11008)));
        assert_eq!(with_decode(vec![], true, default_shapes), decode);
        let named = with_decode(vec![Shape::cube(1024), Shape::new(16, 11008, 4096)], true, default_shapes);
        assert_eq!((named.len(), named[0]), (22, Shape::cube(1024)));
        assert_eq!(with_decode(vec![], false, default_shapes), default_shapes());
    }

    /// `--partials` sweeps each partial rung right after its rung.
    #[test]
    fn partial_rungs_follow_their_rung() {
        let labels = |partials| swept(&["11".into()], partials).unwrap().iter().map(Swept::label).collect::<Vec<_>>();
        let id = steps::find("11").unwrap().id();
        assert_eq!(labels(false), [id.clone(), "step11-cluster-persistent-bf16".into()]);
        let with = labels(true);
        assert_eq!(with.len(), 4);
        assert_eq!((&with[0], &with[1]), (&id, &format!("{id} no-multicast")));
    }

    /// --merge keeps what the sweep leaves out, and drops the runs of a swept step whose kernel
    /// changed, its partial rungs' among them.
    #[test]
    fn a_merge_keeps_what_it_does_not_sweep() {
        let root = crate::bundle::root();
        let mut old = crate::results::read(&crate::results::files(&root).unwrap()[0]).unwrap();
        let step = steps::find("11").unwrap();
        let at = |r: &Run, shape: (u64, u64, u64)| Run { m: shape.0, n: shape.1, k: shape.2, ..r.clone() };
        let one = old.runs.iter().find(|r| r.step == step.id()).unwrap().clone();
        let partial = Run { partial: Some(step.partials[0].name.into()), ..one.clone() };
        old.runs = vec![at(&one, (4096, 4096, 4096)), at(&one, (1024, 1024, 1024))];
        old.partials = vec![at(&partial, (4096, 4096, 4096)), at(&partial, (1024, 1024, 1024))];
        old.kernel_hashes.insert(step.id(), step.kernel.hash());
        let file = std::env::temp_dir().join(format!("merge-{}.json", std::process::id()));
        let swept = [Swept { step, partial: None }];
        let kept_of = |old: &Sweep| {
            write(&file, old).unwrap();
            let k = kept(&file, &swept, &[Shape::cube(4096)]).unwrap();
            let shapes = |runs: &[Run]| runs.iter().map(|r| r.m).collect::<Vec<_>>();
            (shapes(&k.runs), shapes(&k.partials))
        };
        assert_eq!(kept_of(&old), (vec![1024], vec![4096, 1024]));
        old.kernel_hashes.insert(step.id(), "0000000000000000".into());
        assert_eq!(kept_of(&old), (vec![], vec![]));
        std::fs::remove_file(&file).unwrap();
    }

    /// --take adds the runs the other copy timed since, in place of the file's of the same shape,
    /// and refuses a step whose other runs in the file timed another kernel.
    #[test]
    fn a_take_adds_what_the_other_copy_timed() {
        let root = crate::bundle::root();
        let mut file = crate::results::read(&crate::results::files(&root).unwrap()[0]).unwrap();
        let step = steps::find("11").unwrap();
        let at = |r: &Run, m: u64, gflops: f64| Run { m, n: m, k: m, gflops, ..r.clone() };
        let one = file.runs.iter().find(|r| r.step == step.id()).unwrap().clone();
        file.runs = vec![at(&one, 4096, 1.0), at(&one, 1024, 1.0)];
        file.partials.clear();
        file.kernel_hashes.insert(step.id(), "new".into());
        let mut other = file.clone();
        other.runs = vec![at(&one, 4096, 2.0), at(&one, 1024, 1.0), at(&one, 2048, 3.0)];
        let both = taken(file.clone(), &other).unwrap();
        let runs: Vec<(u64, f64)> = both.runs.iter().map(|r| (r.m, r.gflops)).collect();
        assert_eq!(runs, [(1024, 1.0), (4096, 2.0), (2048, 3.0)]);
        other.kernel_hashes.insert(step.id(), "newer".into());
        assert!(taken(file, &other).is_err());
    }

    /// --void-moved drops a run whose recorded defines are not its launch of today, and keeps one
    /// that ran it.
    #[test]
    fn a_void_drops_the_runs_whose_launch_moved() {
        let root = crate::bundle::root();
        let mut file = crate::results::read(&crate::results::files(&root).unwrap()[0]).unwrap();
        let step = steps::find("15").unwrap();
        let shape = Shape::new(1, 4096, 4096);
        let today = crate::results::define_list(&(step.launch)(&shape));
        let one = Run { step: step.id(), ..file.runs[0].clone() };
        let at = |defines: Vec<String>, k: u64| Run { m: 1, n: 4096, k, defines, ..one.clone() };
        let before: Vec<String> = today.iter().map(|d| if d == "BN=8" { "BN=16".into() } else { d.clone() }).collect();
        assert_ne!(before, today);
        file.runs = vec![at(today, 4096), at(before, 4096)];
        let (kept, gone) = unmoved(file);
        assert_eq!((kept.runs.len(), gone.len()), (1, 1));
        assert!(gone[0].contains("BN=16"), "{gone:?}");
    }

    #[test]
    fn slugs_and_dates() {
        assert_eq!(slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
        assert_eq!(slug("  A100-SXM4 (40GB) "), "a100-sxm4-40gb");
        let d = today();
        assert_eq!((d.len(), &d[4..5], &d[7..8]), (10, "-", "-"));
        assert!(d.as_str() > "2026-01-01");
    }
}
