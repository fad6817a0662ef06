//! The verifier, driven by many random problems on the CPU: it must never fail a correct
//! FP32 result (whatever order the kernel summed in, however much alpha*A*B and beta*C
//! cancel), and it must always fail the mistakes kernels make. No GPU needed.

use common::harness::data::Rng;
use common::verify::bound::Tolerance;
use common::verify::compare::compare;
use common::verify::reference::{Reference, cpu_reference};
use common::verify::report::Check;
use common::verify::scales::Scales;
use common::{Gemm, Inputs, Shape};

/// How many random problems each run checks (fresh seeds each run; `VERIFIER_CASES` and
/// `VERIFIER_SEED` override, to replay a failure).
const CASES: usize = 100_000;

/// How a kernel might have summed one dot product in FP32.
#[derive(Clone, Copy, Debug)]
enum Order {
    /// One thread walking K with fused multiply-adds (steps 1-6).
    Fma,
    /// Backwards, each product rounded before it is added.
    ReverseNoFma,
    /// Eight partial sums (a K-split, or a thread tile's interleaving), added at the end.
    Blocked8,
    /// A tree: pairs, then pairs of pairs (a reduction across lanes).
    Pairwise,
    /// K split in four contiguous parts, each summed with FMA, the parts added at the end
    /// (split-K across blocks or warps).
    SplitK4,
}

const ORDERS: [Order; 5] = [Order::Fma, Order::ReverseNoFma, Order::Blocked8, Order::Pairwise, Order::SplitK4];

fn dot(order: Order, a: &[f32], b: &[f32], k: usize, n: usize, j: usize) -> f32 {
    let p = |t: usize| a[t] * b[t * n + j];
    match order {
        Order::Fma => (0..k).fold(0f32, |acc, t| a[t].mul_add(b[t * n + j], acc)),
        Order::ReverseNoFma => (0..k).rev().fold(0f32, |acc, t| acc + p(t)),
        Order::Blocked8 => {
            let mut part = [0f32; 8];
            (0..k).for_each(|t| part[t % 8] = a[t].mul_add(b[t * n + j], part[t % 8]));
            part.iter().sum()
        }
        Order::Pairwise => {
            let mut v: Vec<f32> = (0..k).map(p).collect();
            while v.len() > 1 {
                v = v.chunks(2).map(|c| c.iter().sum()).collect();
            }
            v.first().copied().unwrap_or(0.0)
        }
        Order::SplitK4 => {
            let part = k.div_ceil(4).max(1);
            (0..k)
                .step_by(part)
                .map(|start| (start..(start + part).min(k)).fold(0f32, |acc, t| a[t].mul_add(b[t * n + j], acc)))
                .sum()
        }
    }
}

/// C = alpha*A*B + beta*C0 in FP32, summed in `order`; C0 is not read when beta == 0.
fn fp32_gemm(gemm: &Gemm, order: Order, fma_epilogue: bool, x: &Inputs) -> Vec<f64> {
    let Shape { m, n, k } = gemm.shape;
    let mut c = vec![0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            let acc = gemm.alpha * dot(order, &x.a[i * k..(i + 1) * k], &x.b, k, n, j);
            let c0 = x.c0[i * n + j];
            let v = match (gemm.beta == 0.0, fma_epilogue) {
                (true, _) => acc,
                (false, true) => gemm.beta.mul_add(c0, acc),
                (false, false) => acc + gemm.beta * c0,
            };
            c[i * n + j] = v as f64;
        }
    }
    c
}

/// A log-uniform integer in [lo, hi].
fn log_uniform(rng: &mut Rng, lo: usize, hi: usize) -> usize {
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    ((lo as f64).ln() + u * ((hi as f64 + 1.0).ln() - (lo as f64).ln())).exp().floor().min(hi as f64) as usize
}

fn pick<T: Copy>(rng: &mut Rng, xs: &[T]) -> T {
    xs[(rng.next_u64() % xs.len() as u64) as usize]
}

/// One random problem: a shape (mostly small M and N, K up to 4096), scalars that include
/// cancelling pairs, random-sign or same-sign data, and sometimes a C0 chosen so that
/// beta*C0 cancels alpha*A*B to the last bits.
fn problem(rng: &mut Rng) -> (Gemm, Inputs) {
    let shape = if rng.next_u64() % 8 == 0 {
        Shape::new(log_uniform(rng, 1, 96), log_uniform(rng, 1, 96), log_uniform(rng, 1, 64))
    } else {
        let k = if rng.next_u64() % 50 == 0 { 0 } else { log_uniform(rng, 1, 4096) };
        Shape::new(log_uniform(rng, 1, 12), log_uniform(rng, 1, 12), k)
    };
    let random = |rng: &mut Rng| 3.0 * rng.next_f32();
    let alpha = if rng.next_u64() % 4 == 0 { random(rng) } else { pick(rng, &[1.0, -1.0, 1.5, -1.5, 0.5, 2.0, 0.0]) };
    let beta = if rng.next_u64() % 4 == 0 { random(rng) } else { pick(rng, &[0.0, 1.0, -1.0, 0.75, -0.75, 0.5]) };
    let gemm = Gemm::new(shape, alpha, beta);
    let mut x = Inputs::new(&gemm, rng.next_u64());
    if rng.next_u64() % 5 == 0 {
        // Same-sign data: no cancellation inside the dot products, the largest partial sums.
        x.a.iter_mut().chain(x.b.iter_mut()).for_each(|v| *v = v.abs());
    }
    if beta != 0.0 && rng.next_u64() % 3 == 0 {
        // beta*C0 = -alpha*A*B (as FP32 sees it): the result is what rounding leaves over.
        let Shape { m, n, k } = shape;
        for i in 0..m {
            for j in 0..n {
                let ab = dot(Order::Fma, &x.a[i * k..(i + 1) * k], &x.b, k, n, j);
                x.c0[i * n + j] = -(alpha * ab) / beta;
            }
        }
    }
    (gemm, x)
}

/// A correct FP32 result against the float64 reference, or against a second FP32 result
/// summed in another order (how a kernel is compared with cuBLAS).
fn check_correct(rng: &mut Rng, gemm: &Gemm, x: &Inputs, scales: &Scales, exact: &Reference) -> Check {
    let got = fp32_gemm(gemm, pick(rng, &ORDERS), rng.next_u64() % 2 == 0, x);
    if rng.next_u64() % 2 == 0 {
        compare("CPU f64", gemm, Tolerance::F32_VS_F64, scales, &x.c0, &got, exact)
    } else {
        let other = fp32_gemm(gemm, pick(rng, &ORDERS), rng.next_u64() % 2 == 0, x);
        let rows = (0..gemm.shape.m).collect();
        compare("FP32", gemm, Tolerance::F32_VS_F32, scales, &x.c0, &got, &Reference { rows, values: other })
    }
}

/// The mistakes the verifier must catch, each applied to a correct result. A mistake that
/// changes no element by at least 10^-3 of its terms' scale (an ignored alpha when alpha is 1,
/// a dropped beta*C when C0 is zero, a transposed symmetric result) is left out.
fn mistakes(rng: &mut Rng, gemm: &Gemm, x: &Inputs, good: &[f64]) -> Vec<(&'static str, Vec<f64>)> {
    let scale = |e: usize| terms_scale(gemm, x, e);
    let matters = |bad: &Vec<f64>| {
        bad.iter().zip(good).enumerate().any(|(e, (b, g))| (b - g).is_nan() || (b - g).abs() > 1e-3 * scale(e))
    };
    let mut all = candidate_mistakes(rng, gemm, x, good);
    all.retain(|(_, bad)| matters(bad));
    all
}

/// The size of the terms of element `e`: |alpha| * ||row of A|| * ||column of B|| + |beta*C0|
/// (Cauchy-Schwarz bounds sum |a_ik b_kj| by it). A mistake smaller than a thousandth of it
/// is not one a kernel makes.
fn terms_scale(gemm: &Gemm, x: &Inputs, e: usize) -> f64 {
    let Shape { n, k, .. } = gemm.shape;
    let (i, j) = (e / n, e % n);
    let a = x.a[i * k..(i + 1) * k].iter().map(|&v| (v as f64).powi(2)).sum::<f64>().sqrt();
    let b = (0..k).map(|t| (x.b[t * n + j] as f64).powi(2)).sum::<f64>().sqrt();
    let c = if gemm.beta == 0.0 { 0.0 } else { (gemm.beta * x.c0[e]).abs() as f64 };
    gemm.alpha.abs() as f64 * a * b + c
}

fn candidate_mistakes(rng: &mut Rng, gemm: &Gemm, x: &Inputs, good: &[f64]) -> Vec<(&'static str, Vec<f64>)> {
    let Shape { m, n, k } = gemm.shape;
    let mut out = Vec::new();
    if m * n == 0 {
        return out;
    }
    let (i, j) = ((rng.next_u64() % m as u64) as usize, (rng.next_u64() % n as u64) as usize);
    // One element wrong by one part in 10^3 of its terms' scale.
    let scale = terms_scale(gemm, x, i * n + j);
    let mut wrong = good.to_vec();
    wrong[i * n + j] += 1.01e-3 * scale + 1e-30;
    out.push(("one wrong element", wrong));
    let mut nan = good.to_vec();
    nan[i * n + j] = f64::NAN;
    out.push(("one NaN", nan));
    if k > 0 && (gemm.alpha - 1.0).abs() >= 0.25 {
        let ignored = Gemm { alpha: 1.0, ..*gemm };
        out.push(("alpha ignored", fp32_gemm(&ignored, Order::Fma, true, x)));
    }
    if gemm.beta != 0.0 {
        let dropped = Gemm { beta: 0.0, ..*gemm };
        out.push(("beta*C dropped", fp32_gemm(&dropped, Order::Fma, true, x)));
        if (gemm.beta - 1.0).abs() >= 0.25 {
            let one = Gemm { beta: 1.0, ..*gemm };
            out.push(("beta taken as 1", fp32_gemm(&one, Order::Fma, true, x)));
        }
    }
    if m == n && m >= 2 {
        let t = (0..m * n).map(|e| good[(e % n) * n + e / n]).collect();
        out.push(("transposed", t));
    }
    out
}

/// What one worker saw.
#[derive(Default)]
struct Tally {
    done: usize,
    false_failures: Vec<String>,
    /// (mistake, times tried, times caught)
    caught: Vec<(&'static str, usize, usize)>,
    /// The largest fraction of a bound a correct result used.
    worst: f64,
}

impl Tally {
    fn count(&mut self, what: &'static str, tried: usize, hit: usize) {
        match self.caught.iter_mut().find(|e| e.0 == what) {
            Some(e) => (e.1, e.2) = (e.1 + tried, e.2 + hit),
            None => self.caught.push((what, tried, hit)),
        }
    }

    fn add(mut self, other: Tally) -> Tally {
        self.done += other.done;
        self.false_failures.extend(other.false_failures);
        other.caught.into_iter().for_each(|(w, t, h)| self.count(w, t, h));
        self.worst = self.worst.max(other.worst);
        self
    }
}

fn worker(seed: u64, cases: usize) -> Tally {
    let mut rng = Rng::new(seed);
    let mut tally = Tally::default();
    for _ in 0..cases {
        let (gemm, x) = problem(&mut rng);
        let scales = Scales::new(&gemm, &x.a, &x.b);
        let rows: Vec<usize> = (0..gemm.shape.m).collect();
        let exact = cpu_reference(&gemm, &x.a, &x.b, &x.c0, &rows);
        let c = check_correct(&mut rng, &gemm, &x, &scales, &exact);
        tally.done += 1;
        tally.worst = tally.worst.max(c.scaled_error / c.frobenius_limit).max(c.worst_ratio);
        if !c.passed() {
            tally.false_failures.push(format!("{gemm}: {c}"));
        }
        let good = fp32_gemm(&gemm, Order::Fma, true, &x);
        for (what, bad) in mistakes(&mut rng, &gemm, &x, &good) {
            let c = compare("CPU f64", &gemm, Tolerance::F32_VS_F64, &scales, &x.c0, &bad, &exact);
            if c.passed() {
                eprintln!("missed ({what}): {gemm}: {c}");
            }
            tally.count(what, 1, !c.passed() as usize);
        }
    }
    tally
}

#[test]
fn no_false_failures_and_every_mistake_caught() {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let cases = env("VERIFIER_CASES").map_or(CASES, |c| c as usize);
    let seed = env("VERIFIER_SEED").unwrap_or_else(common::harness::data::fresh_seed);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(8);
    let tally = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let share = cases / threads + usize::from(t < cases % threads);
                s.spawn(move || worker(seed ^ (t as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15), share))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a worker panicked")).fold(Tally::default(), Tally::add)
    });
    println!(
        "verifier: {} random correct results (seed {seed}), {} false failures; the most of a bound used: {:.3}",
        tally.done,
        tally.false_failures.len(),
        tally.worst
    );
    for (what, tried, hit) in &tally.caught {
        println!("verifier: {what}: caught {hit} of {tried}");
    }
    assert_eq!(tally.done, cases);
    let shown: Vec<&str> = tally.false_failures.iter().take(5).map(String::as_str).collect();
    assert!(tally.false_failures.is_empty(), "correct results failed:\n{}", shown.join("\n"));
    for (what, tried, hit) in tally.caught {
        assert!(tried > 100, "{what}: only {tried} cases");
        assert_eq!(hit, tried, "{what}: {} of {tried} not caught", tried - hit);
    }
}
