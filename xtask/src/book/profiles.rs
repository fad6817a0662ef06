//! Profiles, recorded like results: `scripts/profile.sh BUNDLE OUT` runs Nsight Compute on one
//! launch of every registry entry at its profile's shape (`shape_of`: 4096³ but for step 15) and
//! writes `OUT/<gpu>/<id>.csv`, which is copied to
//! `results/profiles/<gpu>/`. Each file is what `ncu --csv --page raw` printed, after a few
//! `# key: value` lines the script writes first (the GPU, the date, the Nsight Compute version,
//! the kernel's hash and the exact command), and the step binary's own output around it, which
//! the parser skips. The book shows each as a small table with its command
//! (`generated/<gpu>/profile-<id>.md`), and the chapters' prose names single counters
//! (`<id>_profile_<key>`, `values.rs`).

use common::{Shape, Step};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// The counters the book names, in the order its tables show them: metric, key (for a named
/// value), and what it counts. The metrics a command asked for that are not here follow under
/// their own names.
const COUNTERS: &[(&str, &str, &str)] = &[
    ("gpu__time_duration.sum", "time", "time"),
    ("sm__cycles_elapsed.avg.per_second", "clock", "SM clock"),
    ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "tensor-pipe", "tensor pipe active"),
    ("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "fma-pipe", "FMA pipe active"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "warps-active", "warps active (achieved occupancy)"),
    ("smsp__inst_executed.sum", "instructions", "warp instructions executed"),
    ("dram__bytes_read.sum", "dram-read", "DRAM read"),
    ("dram__bytes_write.sum", "dram-write", "DRAM written"),
    ("lts__t_bytes.sum", "l2-bytes", "bytes through L2"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "smem-ld-wavefronts", "shared-memory load wavefronts"),
    (
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "smem-ld-conflicts",
        "shared-memory load bank conflicts",
    ),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "smem-st-wavefronts", "shared-memory store wavefronts"),
    (
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        "smem-st-conflicts",
        "shared-memory store bank conflicts",
    ),
    (
        "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
        "stall-long-scoreboard",
        "global memory, an mbarrier's wait (long scoreboard)",
    ),
    ("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", "stall-barrier", "a barrier"),
    ("smsp__average_warps_issue_stalled_membar_per_issue_active.ratio", "stall-membar", "a memory fence"),
    (
        "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
        "stall-short-scoreboard",
        "shared memory (short scoreboard)",
    ),
    (
        "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
        "stall-mio-throttle",
        "a full shared-memory queue (MIO throttle)",
    ),
    (
        "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
        "stall-math-pipe",
        "a busy math pipe",
    ),
    ("smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "stall-wait", "a fixed latency (wait)"),
    ("smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio", "stall-sleeping", "sleeping"),
];

/// Nsight Compute's per-issue stall ratios: the warps stalled for one reason, on average, per
/// instruction issued. The tables show them apart, as warps per issued instruction.
fn is_stall(metric: &str) -> bool {
    metric.starts_with("smsp__average_warps_issue_stalled_") && metric.ends_with("_per_issue_active.ratio")
}

/// One counter as the file gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct Counter {
    pub metric: String,
    pub unit: String,
    pub value: String,
}

/// One profiled launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// The `# key: value` lines: gpu, date, ncu, kernel (its hash), command.
    pub about: BTreeMap<String, String>,
    pub counters: Vec<Counter>,
}

/// A GPU's profiles, by registry id.
pub type Profiles = BTreeMap<String, Profile>;

/// Every `results/profiles/<gpu>/<id>.csv`, by GPU slug and id; an error names the file.
pub fn load_all(root: &Path) -> Result<BTreeMap<String, Profiles>, String> {
    let mut out = BTreeMap::new();
    let dir = root.join("results/profiles");
    let Ok(gpus) = std::fs::read_dir(&dir) else { return Ok(out) };
    let mut gpus: Vec<_> = gpus.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_dir()).collect();
    gpus.sort();
    for gpu in gpus {
        let mut profiles = Profiles::new();
        let mut files: Vec<_> = std::fs::read_dir(&gpu)
            .map_err(|e| format!("{}: {e}", gpu.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "csv"))
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            let profile = parse(&text).map_err(|e| format!("{}: {e}", file.display()))?;
            profiles.insert(file.file_stem().unwrap_or_default().to_string_lossy().into_owned(), profile);
        }
        out.insert(gpu.file_name().unwrap_or_default().to_string_lossy().into_owned(), profiles);
    }
    Ok(out)
}

/// One line of CSV as Nsight Compute writes it: every field quoted, `""` a quote inside one
/// (unquoted fields are read as they are). None for a line that is not CSV.
fn csv_fields(line: &str) -> Option<Vec<String>> {
    if !line.starts_with('"') {
        return None;
    }
    let mut fields = Vec::new();
    let mut chars = line.trim_end_matches(['\r', '\n']).chars().peekable();
    loop {
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                    None => return None,
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                field.push(c);
                chars.next();
            }
        }
        fields.push(field);
        match chars.next() {
            Some(',') => continue,
            None => return Some(fields),
            Some(_) => return None,
        }
    }
}

/// A profile file: its `# key: value` lines, then the first `sgemm` launch of Nsight Compute's
/// CSV, either page: `raw` (a header, a row of units, a row per launch, a column per metric) or
/// `details` (a row per metric, with "Metric Name", "Metric Unit" and "Metric Value").
pub fn parse(text: &str) -> Result<Profile, String> {
    let mut about = BTreeMap::new();
    for line in text.lines() {
        if let Some((k, v)) = line.strip_prefix("# ").and_then(|l| l.split_once(": ")) {
            about.insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    let rows: Vec<Vec<String>> = text.lines().filter_map(csv_fields).collect();
    let header = rows.iter().position(|r| r.first().is_some_and(|c| c == "ID")).ok_or("no CSV header (\"ID\", ...)")?;
    let head = &rows[header];
    let col = |name: &str| head.iter().position(|h| h == name);
    let kernel = col("Kernel Name").ok_or("no \"Kernel Name\" column")?;
    let launch = |r: &Vec<String>| r.len() == head.len() && !r[0].is_empty() && r[kernel].starts_with("sgemm");
    let mut counters = Vec::new();
    if let (Some(name), Some(unit), Some(value)) = (col("Metric Name"), col("Metric Unit"), col("Metric Value")) {
        let first = rows[header + 1..].iter().find(|r| launch(r)).ok_or("no sgemm launch")?[0].clone();
        for r in rows[header + 1..].iter().filter(|r| launch(r) && r[0] == first) {
            counters.push(Counter { metric: r[name].clone(), unit: r[unit].clone(), value: r[value].clone() });
        }
    } else {
        let units = rows.get(header + 1).filter(|r| r.len() == head.len() && r[0].is_empty());
        let row = rows[header + 1..].iter().find(|r| launch(r)).ok_or("no sgemm launch")?;
        for (i, metric) in head.iter().enumerate().filter(|(_, h)| h.contains("__")) {
            let unit = units.map_or(String::new(), |u| u[i].clone());
            counters.push(Counter { metric: metric.clone(), unit, value: row[i].clone() });
        }
    }
    if counters.is_empty() {
        return Err("no counters".into());
    }
    Ok(Profile { about, counters })
}

/// A counter's value in the book's units: times in µs, clocks in MHz, bytes in MB or GB (10^6,
/// 10^9), counts of a million or more in millions, percentages with one decimal, the per-issue
/// stall ratios with two; anything else as Nsight Compute gave it, with its unit.
fn shown(c: &Counter) -> String {
    let Some(v) = c.value.replace(',', "").parse::<f64>().ok() else {
        return if c.unit.is_empty() { c.value.clone() } else { format!("{} {}", c.value, c.unit) };
    };
    let unit = c.unit.to_ascii_lowercase();
    let scale = |units: &[(&str, f64)]| units.iter().find(|(u, _)| *u == unit).map(|(_, f)| v * f);
    let time = scale(&[("ns", 1e-3), ("nsecond", 1e-3), ("us", 1.0), ("usecond", 1.0), ("ms", 1e3), ("msecond", 1e3)]);
    let hz = scale(&[("hz", 1.0), ("khz", 1e3), ("mhz", 1e6), ("ghz", 1e9)]);
    let bytes = scale(&[("byte", 1.0), ("kbyte", 1e3), ("mbyte", 1e6), ("gbyte", 1e9), ("tbyte", 1e12)]);
    match (time, hz, bytes) {
        (Some(us), _, _) => format!("{us:.1} µs"),
        (_, Some(hz), _) => format!("{:.0} MHz", hz / 1e6),
        (_, _, Some(b)) if b >= 1e9 => format!("{:.2} GB", b / 1e9),
        (_, _, Some(b)) => format!("{:.1} MB", b / 1e6),
        _ if unit == "%" => format!("{v:.1}%"),
        _ if is_stall(&c.metric) => format!("{v:.2}"),
        _ if v >= 1e6 => format!("{} million", significant(v / 1e6)),
        _ if unit.is_empty() || unit == "inst" => c.value.clone(),
        _ => format!("{} {}", c.value, c.unit),
    }
}

/// Three significant figures: 1.26, 18.6, 245.
fn significant(v: f64) -> String {
    match v {
        v if v >= 100.0 => format!("{v:.0}"),
        v if v >= 10.0 => format!("{v:.1}"),
        v => format!("{v:.2}"),
    }
}

/// The metrics the profile's command asked for (`--metrics a,b,...`), in its order; none when
/// the command does not say (then the table shows the counters the book names).
fn requested(command: &str) -> Vec<&str> {
    let mut words = command.split_whitespace();
    while let Some(w) = words.next() {
        if let Some(list) = w.strip_prefix("--metrics=").or_else(|| (w == "--metrics").then(|| words.next()).flatten())
        {
            return list.split(',').filter(|m| !m.is_empty()).collect();
        }
    }
    Vec::new()
}

/// The shape a step's profile is taken at (`scripts/profile.sh` reads it from `cargo xtask
/// hashes`): 4096³, except step 15, whose kernel there is step 12's; its own runs at skinny shapes,
/// so it is profiled at its chapter's decode shape.
pub fn shape_of(step: &Step) -> Shape {
    if step.name == step15_skinny::FP16.name { Shape::new(16, 11008, 4096) } else { Shape::cube(4096) }
}

/// The shape a profile's command ran (`--m`, `--n`, `--k`, each 4096 where not given), as the
/// book writes it: `4096³` for a cube.
fn command_shape(command: &str) -> String {
    let words: Vec<&str> = command.split_whitespace().collect();
    let dim = |flag: &str| words.windows(2).find(|w| w[0] == flag).map_or("4096", |w| w[1]);
    let (m, n, k) = (dim("--m"), dim("--n"), dim("--k"));
    if m == n && n == k { format!("{m}³") } else { format!("{m} x {n} x {k}") }
}

impl Profile {
    /// The counter named by `key` (see [`COUNTERS`]) or by its metric.
    pub fn value(&self, key: &str) -> Result<String, String> {
        let metric = COUNTERS.iter().find(|c| c.1 == key).map_or(key, |c| c.0);
        let c = self.counters.iter().find(|c| c.metric == metric);
        c.map(shown).ok_or_else(|| {
            let keys: Vec<&str> =
                COUNTERS.iter().filter(|k| self.counters.iter().any(|c| c.metric == k.0)).map(|k| k.1).collect();
            format!("no counter `{key}` in this profile (it has {})", keys.join(", "))
        })
    }
}

/// The profile table of `step` on the GPU called `gpu`, with its command; or what to run where
/// there is none yet. It shows the metrics the command asked for (a raw page holds every device
/// attribute and each metric's .min, .max and .avg besides), the stall ratios apart.
pub fn table(gpu: &str, step: &Step, profiles: Option<&Profiles>) -> String {
    let id = step.id();
    let Some(p) = profiles.and_then(|p| p.get(&id)) else {
        return format!(
            "No profile of `{id}` on the {gpu} is recorded yet: `scripts/profile.sh BUNDLE OUT` on that GPU \
             writes it, to be copied into `results/profiles/`.\n"
        );
    };
    let about = |k: &str| p.about.get(k).map_or("?", String::as_str);
    let asked = requested(about("command"));
    let shown_here = |c: &&Counter| {
        if asked.is_empty() { COUNTERS.iter().any(|k| k.0 == c.metric) } else { asked.contains(&c.metric.as_str()) }
    };
    let mut rows: Vec<&Counter> = Vec::new();
    for (metric, _, _) in COUNTERS {
        rows.extend(p.counters.iter().filter(|c| c.metric == *metric).filter(shown_here));
    }
    for metric in &asked {
        rows.extend(p.counters.iter().filter(|c| c.metric == *metric && !COUNTERS.iter().any(|k| k.0 == c.metric)));
    }
    let label = |c: &Counter| COUNTERS.iter().find(|k| k.0 == c.metric).map_or("", |k| k.2);
    let mut s = format!(
        "Nsight Compute {}, one launch of `sgemm` at {} on the {gpu}, {}:\n\n| counter | metric | value |\n|---|---|---:|\n",
        about("ncu"),
        command_shape(about("command")),
        about("date"),
    );
    for c in rows.iter().filter(|c| !is_stall(&c.metric)) {
        let _ = writeln!(s, "| {} | `{}` | {} |", label(c), c.metric, shown(c));
    }
    let stalls: Vec<&&Counter> = rows.iter().filter(|c| is_stall(&c.metric)).collect();
    if !stalls.is_empty() {
        s += "\nWarps stalled, per issued instruction: on average, how many warps wait for each reason \
              each time a scheduler issues an instruction.\n\n| waiting for | metric | warps per issued instruction |\n|---|---|---:|\n";
        for c in stalls {
            let _ = writeln!(s, "| {} | `{}` | {} |", label(c), c.metric, shown(c));
        }
    }
    let _ = write!(
        s,
        "\nThe command (`scripts/profile.sh`; the binary from `cargo build --release -p {}`):\n\n```console\n{}\n```\n",
        step.name,
        wrap(about("command"))
    );
    s
}

/// A long command folded at its options, with shell continuations.
fn wrap(command: &str) -> String {
    let mut lines: Vec<String> = vec![String::new()];
    for word in command.split(' ').filter(|w| !w.is_empty()) {
        let last = lines.last_mut().expect("one line at least");
        // The metric list and the binary each begin a line, as the chapters show a command.
        let binary = !word.starts_with('-') && word.contains('/');
        if !last.is_empty() && (word == "--metrics" || binary) {
            lines.push(format!("    {word}"));
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(word);
        }
    }
    lines.join(" \\\n")
}

/// Profiles of kernels that changed after they were profiled.
pub fn stale(all: &BTreeMap<String, Profiles>) -> Vec<String> {
    let mut problems = Vec::new();
    for (slug, profiles) in all {
        for (id, p) in profiles {
            let file = format!("results/profiles/{slug}/{id}.csv");
            match (steps::by_id(id), p.about.get("kernel")) {
                (None, _) => problems.push(format!("{file}: {id} is not a step of the registry")),
                (Some(step), Some(hash)) if *hash == step.kernel.hash() => {}
                (Some(_), _) => problems.push(format!(
                    "{file}: {id} changed after it was profiled: run scripts/profile.sh on that GPU again"
                )),
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `ncu --csv --page raw` prints for one launch (the header, the units, the launch),
    /// after the step binary's own lines and Nsight Compute's, as the Nsight Compute CLI's
    /// documentation describes the CSV: every field quoted, a comma in a value kept inside its
    /// quotes.
    const RAW: &str = r#"# gpu: NVIDIA H200
# date: 2026-12-01
# ncu: 2025.3.1.0
# kernel: 0123456789abcdef
# command: ncu --clock-control none --kernel-name sgemm --launch-count 1 --csv --page raw --metrics gpu__time_duration.sum,lts__t_bytes.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active target/release/step09-wgmma-tma --precision fp16 --m 4096 --n 4096 --k 4096 --verify-only
==PROF== Connected to process 4242 (/bundle/bin/step09-wgmma-tma)
==PROF== Profiling "sgemm": 0%....50%....100% - 9 passes
| step | shape | verified |
| step09-wgmma-tma-fp16 | 4096³ | ok |
==PROF== Disconnected from process 4242
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__time_duration.sum","lts__t_bytes.sum","sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"
"","","","","","","","","","","","usecond","Gbyte","%"
"0","4242","step09-wgmma-tma","gpu-node","sgemm","1","7","(128, 1, 1)","(16, 64, 1)","0","9.0","282.91","1,234.5","56.97"
"#;

    /// What the raw page holds besides the metrics asked for: device attributes and each metric's
    /// .min/.max/.avg, in Nsight Compute's own units.
    const RAW_MORE: &str = r#"# command: ncu --csv --page raw --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio target/release/step12-epilogue --verify-only
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","device__attribute_display_name","dram__bytes_read.avg","dram__bytes_read.sum","gpu__time_duration.sum","sm__cycles_elapsed.avg.per_second","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","smsp__inst_executed.sum"
"","","","","","","","","","","","","byte","byte","ns","hz","inst","inst"
"0","1","s","h","sgemm","1","7","(384, 1, 1)","(132, 1, 1)","0","9.0","NVIDIA H200","2,629,424","126,212,352","190,368","1,549,590,474.21","6.41","18,593,492"
"#;

    /// The same launch on the `details` page: a row per metric.
    const DETAILS: &str = r#""ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","step09-wgmma-tma","gpu-node","sgemm","1","7","(128, 1, 1)","(16, 64, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","282.91"
"0","4242","step09-wgmma-tma","gpu-node","sgemm","1","7","(128, 1, 1)","(16, 64, 1)","0","9.0","Command line profiler metrics","lts__t_bytes.sum","Gbyte","1,234.5"
"0","4242","step09-wgmma-tma","gpu-node","sgemm","1","7","(128, 1, 1)","(16, 64, 1)","0","9.0","Command line profiler metrics","sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active","%","56.97"
"#;

    #[test]
    fn both_pages_of_the_csv_parse_alike() {
        let raw = parse(RAW).unwrap();
        assert_eq!(raw.about["gpu"], "NVIDIA H200");
        assert!(raw.about["command"].ends_with("--verify-only"));
        assert_eq!(raw.counters.len(), 3);
        assert_eq!(
            raw.counters[1],
            Counter { metric: "lts__t_bytes.sum".into(), unit: "Gbyte".into(), value: "1,234.5".into() }
        );
        assert_eq!(raw.value("tensor-pipe").unwrap(), "57.0%");
        assert_eq!(raw.value("time").unwrap(), "282.9 µs");
        assert_eq!(raw.value("l2-bytes").unwrap(), "1234.50 GB");
        assert!(raw.value("dram-read").unwrap_err().contains("it has time, tensor-pipe, l2-bytes"));
        let details = parse(DETAILS).unwrap();
        assert_eq!(details.counters, raw.counters);
    }

    #[test]
    fn quotes_and_broken_files() {
        assert_eq!(csv_fields(r#""a ""b"", c","1,5",x"#).unwrap(), ["a \"b\", c", "1,5", "x"]);
        assert_eq!(csv_fields(r#""open"#), None);
        assert_eq!(csv_fields("| not csv |"), None);
        assert!(parse("==PROF== nothing\n").unwrap_err().contains("no CSV header"));
        let other_kernel = RAW.replace("\"sgemm\"", "\"prepare_a\"");
        assert!(parse(&other_kernel).unwrap_err().contains("no sgemm launch"));
    }

    #[test]
    fn the_table_shows_the_counters_and_the_command() {
        let step = steps::by_id("step09-wgmma-tma-fp16").unwrap();
        let profiles: Profiles = [(step.id(), parse(RAW).unwrap())].into();
        let t = table("NVIDIA H200", step, Some(&profiles));
        assert!(
            t.contains(
                "| tensor pipe active | `sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active` | 57.0% |"
            ),
            "{t}"
        );
        assert!(t.contains("one launch of `sgemm` at 4096³ on the NVIDIA H200"), "{t}");
        assert!(t.contains("```console\nncu --clock-control none"), "{t}");
        assert!(t.contains("    --metrics gpu__time_duration.sum"), "{t}");
        assert!(table("NVIDIA H200", step, None).contains("No profile of `step09-wgmma-tma-fp16`"));
        // Only what the command asked for, in the book's units, the stalls apart.
        let more: Profiles = [(step.id(), parse(RAW_MORE).unwrap())].into();
        let t = table("NVIDIA H200", step, Some(&more));
        for row in [
            "| time | `gpu__time_duration.sum` | 190.4 µs |",
            "| SM clock | `sm__cycles_elapsed.avg.per_second` | 1550 MHz |",
            "| warp instructions executed | `smsp__inst_executed.sum` | 18.6 million |",
            "| DRAM read | `dram__bytes_read.sum` | 126.2 MB |",
            "| waiting for | metric | warps per issued instruction |",
            "| a barrier | `smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio` | 6.41 |",
        ] {
            assert!(t.contains(row), "{row}\n{t}");
        }
        assert!(!t.contains("device__attribute") && !t.contains(".avg`"), "{t}");
        assert!(t.find("DRAM read").unwrap() < t.find("waiting for").unwrap(), "{t}");
        // Step 15 is profiled at its decode shape, and its table says so.
        let skinny = steps::by_id("step15-skinny-fp16-c16").unwrap();
        assert_eq!(shape_of(skinny), Shape::new(16, 11008, 4096));
        assert_eq!(shape_of(step), Shape::cube(4096));
        let decode: Profiles =
            [(skinny.id(), parse(&RAW.replace("--m 4096 --n 4096", "--m 16 --n 11008")).unwrap())].into();
        let t = table("NVIDIA H200", skinny, Some(&decode));
        assert!(t.contains("one launch of `sgemm` at 16 x 11008 x 4096 on the NVIDIA H200"), "{t}");
        // Its kernel changed since: stale.
        let stale_ones = stale(&[("nvidia-h200".to_string(), profiles)].into());
        assert!(stale_ones.len() == 1 && stale_ones[0].contains("changed after it was profiled"), "{stale_ones:?}");
    }
}
