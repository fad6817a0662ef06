//! The GPUs of the book, side by side: what each results file read off its device, and the
//! datasheet constants the device does not report. The book's one table of datasheet figures, and
//! the GPU of its chapters ([`BOOK_GPU`]).

use crate::results::Results;
use std::fmt::Write;

/// The GPU of the chapters: the slug of its results file. One sweep on one day, so that every
/// ratio a chapter shows compares runs of one run; the other GPUs appear where the book compares
/// GPUs, from their own directories.
pub const BOOK_GPU: &str = "nvidia-h200";

/// What a GPU's datasheet says and its driver does not tell the harness.
struct Datasheet {
    /// The name as the driver gives it (the results file's `gpu.name`), or the GPU's own.
    name: &'static str,
    memory: &'static str,
    shared_kib_per_sm: u32,
    registers_per_sm: u32,
    /// Dense FP16 tensor-core FLOPs per SM and clock (FP32 accumulate); TF32 does half.
    tensor_fp16_per_sm_clock: u32,
    /// For a GPU without results: SMs, FP32 lanes per SM, boost clock (GHz), DRAM bandwidth
    /// (TB/s, as the datasheet gives it) and L2 (MiB).
    unmeasured: Option<(u32, u32, f64, &'static str, u32)>,
}

const DATASHEETS: &[Datasheet] = &[
    Datasheet {
        name: "NVIDIA H200",
        memory: "141 GB HBM3e",
        shared_kib_per_sm: 228,
        registers_per_sm: 65536,
        tensor_fp16_per_sm_clock: 4096,
        unmeasured: None,
    },
    Datasheet {
        name: "NVIDIA H100 80GB HBM3",
        memory: "80 GB HBM3",
        shared_kib_per_sm: 228,
        registers_per_sm: 65536,
        tensor_fp16_per_sm_clock: 4096,
        unmeasured: None,
    },
    Datasheet {
        name: "NVIDIA A100 SXM",
        memory: "40 or 80 GB HBM2e",
        shared_kib_per_sm: 164,
        registers_per_sm: 65536,
        tensor_fp16_per_sm_clock: 2048,
        unmeasured: Some((108, 64, 1.41, "1.6-2.0", 40)),
    },
];

/// Shared memory per SM of the GPU called `name` (KiB), from its datasheet.
pub fn shared_kib_per_sm(name: &str) -> Option<u32> {
    DATASHEETS.iter().find(|d| d.name == name).map(|d| d.shared_kib_per_sm)
}

/// Dense FP16 tensor-core FLOPs per SM and clock of the GPU called `name`, from its datasheet.
pub fn tensor_fp16_per_sm_clock(name: &str) -> Option<u32> {
    DATASHEETS.iter().find(|d| d.name == name).map(|d| d.tensor_fp16_per_sm_clock)
}

/// "1070.4 / 535.2 TFLOP/s (4,096 / 2,048 FLOP per SM and clock)": dense FP16 and TF32.
fn tensor_peaks(sms: u32, clock_ghz: f64, per_sm_clock: u32) -> String {
    let fp16 = sms as f64 * per_sm_clock as f64 * clock_ghz / 1e3;
    format!(
        "{fp16:.1} / {:.1} TFLOP/s ({} / {} per SM and clock)",
        fp16 / 2.0,
        thousands(per_sm_clock),
        thousands(per_sm_clock / 2)
    )
}

/// The table: the book's GPU first, then the other GPUs with results, then those known only by
/// their datasheet.
pub fn table(all: &[Results]) -> String {
    let mut gpus: Vec<&Results> = all.iter().collect();
    gpus.sort_by_key(|r| r.slug != BOOK_GPU);
    let mut columns: Vec<(String, Vec<String>)> = Vec::new();
    for r in gpus {
        let g = &r.sweep.gpu;
        let sheet = DATASHEETS.iter().find(|d| d.name == g.name);
        let clock = g.sm_clock_khz as f64 / 1e6;
        let lanes = g.peak_fp32_gflops / (2.0 * clock * g.sms as f64);
        let what = if r.slug == BOOK_GPU { "the chapters' GPU" } else { "measured" };
        columns.push((
            format!("{} ({what})", g.name),
            vec![
                g.sms.to_string(),
                format!("{lanes:.0}"),
                format!("{clock:.2} GHz"),
                format!("{:.1} TFLOP/s", g.peak_fp32_gflops / 1e3),
                sheet.map_or("?".into(), |d| tensor_peaks(g.sms, clock, d.tensor_fp16_per_sm_clock)),
                format!("{}, {:.2} TB/s", sheet.map_or("?", |d| d.memory), g.peak_dram_gbs / 1e3),
                format!("{:.2} TB/s", g.measured_copy_gbs / 1e3),
                format!("{} MiB", g.l2_bytes >> 20),
                sheet.map_or("?".into(), |d| format!("up to {} KiB", d.shared_kib_per_sm)),
                sheet.map_or("?".into(), |d| format!("{} x 32 bit", thousands(d.registers_per_sm))),
            ],
        ));
    }
    for d in DATASHEETS {
        let Some((sms, lanes, clock, dram, l2)) = d.unmeasured else { continue };
        columns.push((
            format!("{} (datasheet)", d.name),
            vec![
                sms.to_string(),
                lanes.to_string(),
                format!("{clock:.2} GHz"),
                format!("{:.1} TFLOP/s", (sms * lanes) as f64 * 2.0 * clock / 1e3),
                tensor_peaks(sms, clock, d.tensor_fp16_per_sm_clock),
                format!("{}, {dram} TB/s", d.memory),
                "-".into(),
                format!("{l2} MiB"),
                format!("up to {} KiB", d.shared_kib_per_sm),
                format!("{} x 32 bit", thousands(d.registers_per_sm)),
            ],
        ));
    }
    let rows = [
        "SMs",
        "FP32 lanes per SM",
        "boost clock",
        "FP32 SIMT peak (lanes x 2 FLOP x clock)",
        "tensor cores, dense FP16 / TF32 with FP32 accumulation (per SM and clock x SMs x clock)",
        "DRAM",
        "device-to-device copy, measured (read + write)",
        "L2 cache",
        "shared memory per SM",
        "registers per SM",
    ];
    let mut s = String::from("|");
    for (head, _) in &columns {
        let _ = write!(s, " | {head}");
    }
    s += " |\n|---|";
    s += &"---:|".repeat(columns.len());
    s += "\n";
    for (i, row) in rows.iter().enumerate() {
        let _ = write!(s, "| {row} |");
        for (_, cells) in &columns {
            let _ = write!(s, " {} |", cells[i]);
        }
        s += "\n";
    }
    s += "\nMeasured columns: the SMs, clock, memory clock and bus width as the harness reads them off the \
          device, with the copy the sweep measures (`results/<gpu>.json`); memory size, shared memory, \
          registers and the tensor cores' FLOPs per SM and clock, and every figure of a datasheet column, \
          from NVIDIA's datasheets.\n";
    s
}

/// 65536 -> "65,536".
fn thousands(v: u32) -> String {
    let digits = v.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_gpu_with_results_has_a_datasheet() {
        let all = crate::results::load_all(&crate::bundle::root()).unwrap();
        for r in &all {
            assert!(
                super::DATASHEETS.iter().any(|d| d.name == r.sweep.gpu.name),
                "no datasheet for {}",
                r.sweep.gpu.name
            );
        }
        let t = super::table(&all);
        assert!(t.contains("| NVIDIA H200 (the chapters' GPU)"), "{t}");
        assert!(t.contains("19.5 TFLOP/s"), "the A100's peak from its datasheet: {t}");
        assert!(t.contains("311.9 / 155.9 TFLOP/s (2,048 / 1,024 per SM and clock)"), "the A100's tensor cores: {t}");
        assert_eq!(super::thousands(65536), "65,536");
    }
}
