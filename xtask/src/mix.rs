//! `cargo xtask mix STEP [--shape MxNxK] [--arch sm_90] [--kernel FILE.cu] [--define NAME=VALUE]...`:
//! the instructions of a kernel's main loop, per tensor-core instruction (per FFMA in the steps
//! without tensor cores), from its SASS (no GPU needed; `nvdisasm` from the CUDA toolkit or
//! PyPI's `nvidia-cuda-nvdisasm`). A warp sub-partition issues one instruction per cycle; where
//! the loop needs more issue slots per mma than the tensor pipe spends on one, the instructions
//! around the mma are the limit. For `mma.sync` and FFMA loops (steps 1-8); a `wgmma` (step 9)
//! runs asynchronously, so its counts do not read this way. For a `wgmma` loop it counts instead
//! what issues after each `wgmma` wait before the next `wgmma`, and `--max-after-wait` fails when
//! that grows (CI holds step 13's 3xTF32 loop to it: ptxas's schedule moves with code elsewhere);
//! and what issues between each wait and the loop's first barrier arrival after it (the hand-back
//! of a buffer to the producer), which `--max-before-hand-back` bounds (CI holds step 15's
//! swapped loop to it: the arrival first after the wait is that loop's point).

use crate::cubin::Built;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: crate::cubin::Target,
    /// Fail when more than N instructions follow a `wgmma` wait before the loop's next `wgmma`
    /// (work the compiler moved where nothing overlaps it)
    #[arg(long, value_name = "N")]
    max_after_wait: Option<usize>,
    /// Fail when more than N instructions come between a `wgmma` wait and the first barrier
    /// arrival after it (the consumer's hand-back of a buffer), or when none comes before the
    /// next `wgmma`
    #[arg(long, value_name = "N")]
    max_before_hand_back: Option<usize>,
}

/// Tensor-core instructions: the unit the loop is counted in.
fn is_mma(op: &str) -> bool {
    ["HMMA", "DMMA", "IMMA", "HGMMA", "BMMA"].contains(&op)
}

/// The opcode of one line of `nvdisasm -c` (`/*0aa0*/  @!P3 LDS.128 R136, [R14] ;`): the
/// mnemonic without its modifiers, or None for labels and other lines.
fn opcode(line: &str) -> Option<&str> {
    let code = line.split_once("*/")?.1.trim_start();
    let code = if code.starts_with('@') { code.split_once(' ')?.1.trim_start() } else { code };
    let op = code.split(|c: char| c == '.' || c.is_whitespace()).next()?;
    (!op.is_empty() && op.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')).then_some(op)
}

/// The instruction a loop is counted in: tensor-core instructions where the kernel has any,
/// else FFMA.
fn work(sass: &str) -> fn(&str) -> bool {
    if sass.lines().any(|l| opcode(l).is_some_and(is_mma)) { is_mma } else { |op| op == "FFMA" }
}

/// The label a branch line jumps to (`@!P1 BRA `(.L_x_6) ;`), if it is a branch.
fn branch_target(line: &str) -> Option<&str> {
    (opcode(line) == Some("BRA")).then(|| line.split('(').nth(1)?.split(')').next())?
}

/// Of the loop bodies of `sass` ([`loops`]), the one with the most work instructions (the
/// first of equals).
pub fn hot_loop<'a, 'b>(sass: &str, loops: &'b [Vec<&'a str>]) -> Option<&'b [&'a str]> {
    let is_work = work(sass);
    let mut best: Option<(usize, &[&str])> = None;
    for body in loops {
        let mmas = body.iter().filter(|l| opcode(l).is_some_and(is_work)).count();
        if best.is_none_or(|(m, _)| mmas > m) {
            best = Some((mmas, body));
        }
    }
    best.map(|(_, body)| body)
}

/// The shortest loop body with a `wgmma` wait: the K loop of a `wgmma` kernel.
pub fn wait_loop<'a, 'b>(loops: &'b [Vec<&'a str>]) -> Option<&'b [&'a str]> {
    loops.iter().filter(|b| b.iter().any(|l| warpgroup(l, "DEPBAR"))).min_by_key(|b| b.len()).map(Vec::as_slice)
}

/// Whether a line is the warpgroup instruction `WARPGROUP.<what>` (ARRIVE starts a batch of
/// `wgmma`, DEPBAR waits for earlier ones).
fn warpgroup(line: &str, what: &str) -> bool {
    opcode(line) == Some("WARPGROUP") && line.split("WARPGROUP.").nth(1).is_some_and(|rest| rest.starts_with(what))
}

/// The body of every loop (a backward branch to a label), each with the blocks ptxas placed
/// outside it (a conditional part of an iteration: a branch out of the loop to a block that
/// ends in a jump back into it).
pub fn loops(sass: &str) -> Vec<Vec<&str>> {
    let lines: Vec<&str> = sass.lines().collect();
    let labels: BTreeMap<&str, usize> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| l.strip_suffix(':').filter(|l| l.starts_with(".L")).map(|l| (l, i)))
        .collect();
    let mut all = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(&start) = branch_target(l).and_then(|t| labels.get(t)).filter(|&&s| s < i) else { continue };
        let inside = |j: usize| (start..=i).contains(&j);
        let mut body = lines[start..=i].to_vec();
        for target in lines[start..=i].iter().filter_map(|l| branch_target(l)) {
            let Some(&from) = labels.get(target).filter(|&&j| !inside(j)) else { continue };
            // The block runs to its first unconditional jump; it belongs to the loop if that
            // jump goes back inside.
            let Some(end) = (from..lines.len()).find(|&j| branch_target(lines[j]).is_some() && !lines[j].contains('@'))
            else {
                continue;
            };
            if branch_target(lines[end]).and_then(|t| labels.get(t)).is_some_and(|&j| inside(j)) {
                body.extend_from_slice(&lines[from..=end]);
            }
        }
        all.push(body);
    }
    all
}

/// The fewest mma between one mma and a later one that adds to its result (its accumulator
/// operand is the first one's destination), in loop order; 1 = back to back, the second
/// waiting for the first. None when no mma reads another's result within the body.
pub fn closest_dependent_mma(body: &[&str]) -> Option<usize> {
    let mut last_write: BTreeMap<String, usize> = BTreeMap::new();
    let mut closest: Option<usize> = None;
    for (n, l) in body.iter().filter(|l| opcode(l).is_some_and(is_mma)).enumerate() {
        let operands: Vec<String> = l
            .split_once("*/")
            .map_or("", |x| x.1)
            .trim()
            .trim_end_matches(';')
            .split(',')
            .map(|o| o.split_whitespace().last().unwrap_or("").split('.').next().unwrap_or("").to_string())
            .collect();
        if let (Some(dest), Some(acc)) = (operands.first(), operands.last()) {
            if let Some(&w) = last_write.get(acc) {
                closest = Some(closest.map_or(n - w, |c: usize| c.min(n - w)));
            }
            last_write.insert(dest.clone(), n);
        }
    }
    closest
}

/// For each `wgmma` wait of a loop body (`WARPGROUP.DEPBAR`), the instructions issued after it
/// until the next `WARPGROUP.ARRIVE` (the start of the next batch of `wgmma`), going round the loop.
fn after_each_wait<'a, 'b>(body: &'b [&'a str]) -> Vec<Vec<&'b &'a str>> {
    let mut out = Vec::new();
    for (i, l) in body.iter().enumerate() {
        if !warpgroup(l, "DEPBAR") {
            continue;
        }
        let next = body.iter().cycle().skip(i + 1).take(body.len());
        out.push(next.take_while(|l| !warpgroup(l, "ARRIVE")).filter(|l| opcode(l).is_some()).collect());
    }
    out
}

/// How many instructions issue after each `wgmma` wait before the next `wgmma` ([`after_each_wait`]):
/// the work that nothing overlaps, if the wait is the one that drains the tensor pipe.
pub fn after_waits(body: &[&str]) -> Vec<usize> {
    after_each_wait(body).iter().map(Vec::len).collect()
}

/// For each `wgmma` wait, the instructions issued after it before the first barrier arrival
/// (`SYNCS.ARRIVE`: a consumer handing a buffer back); None where the next `wgmma` comes first.
pub fn before_hand_backs(body: &[&str]) -> Vec<Option<usize>> {
    after_each_wait(body).iter().map(|after| after.iter().position(|l| l.contains("SYNCS.ARRIVE"))).collect()
}

/// Opcode counts of a stretch of SASS, most frequent first.
pub fn counts<'a>(body: &[&'a str]) -> Vec<(&'a str, usize)> {
    let mut c: BTreeMap<&str, usize> = BTreeMap::new();
    for op in body.iter().filter_map(|l| opcode(l)) {
        *c.entry(op).or_default() += 1;
    }
    let mut v: Vec<_> = c.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v
}

fn nvdisasm() -> PathBuf {
    let in_home = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .map(|p| PathBuf::from(p).join("bin/nvdisasm"))
        .find(|p| p.is_file());
    in_home.unwrap_or_else(|| PathBuf::from("nvdisasm"))
}

pub fn run(Args { target, max_after_wait, max_before_hand_back }: Args) -> Result<(), String> {
    let Built { source, launch, arch, compiled } = target.build()?;
    let dir = std::env::temp_dir().join(format!("sgemm-mix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let cubin = dir.join("kernel.cubin");
    std::fs::write(&cubin, &compiled.cubin).map_err(|e| format!("{}: {e}", cubin.display()))?;
    let tool = nvdisasm();
    let out = std::process::Command::new(&tool).arg("-c").arg(&cubin).output();
    let _ = std::fs::remove_dir_all(&dir);
    let out = out.map_err(|e| {
        format!(
            "cannot run {} ({e}): install the CUDA toolkit, or `pip install nvidia-cuda-nvdisasm`, and put its bin/ on PATH",
            tool.display()
        )
    })?;
    if !out.status.success() {
        return Err(format!("nvdisasm failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    let sass = String::from_utf8_lossy(&out.stdout);
    let all = loops(&sass);
    let body = hot_loop(&sass, &all).ok_or("no loop in the SASS")?;
    let c = counts(body);
    let total: usize = c.iter().map(|(_, n)| n).sum();
    let is_work = work(&sass);
    let mmas: usize = c.iter().filter(|(op, _)| is_work(op)).map(|(_, n)| n).sum();
    let unit = if is_work("FFMA") { "FFMA" } else { "mma" };
    let defines: Vec<String> = launch.defines.iter().map(|(n, v)| format!("{n}={v}")).collect();
    println!("{} ({arch}; {})", source.name, defines.join(" "));
    let r = compiled.resources;
    println!("registers {}, spilled {} B", r.registers, r.spills());
    let per = if mmas > 0 { format!("{:.2}", total as f64 / mmas as f64) } else { "-".into() };
    println!("main loop: {total} instructions, {mmas} {unit}, {per} instructions per {unit}");
    let mix: Vec<String> = c.iter().map(|(op, n)| format!("{op} {n}")).collect();
    println!("{}", mix.join(", "));
    if unit == "mma" {
        match closest_dependent_mma(body) {
            Some(d) => println!("an mma that adds to another's result comes {d} mma after it at the closest"),
            None => println!("no mma adds to another's result within one pass of the loop"),
        }
    }
    let wait_body = wait_loop(&all);
    let waits = wait_body.map(after_waits).unwrap_or_default();
    if !waits.is_empty() {
        let list: Vec<String> = waits.iter().map(|n| n.to_string()).collect();
        println!("instructions after each wgmma wait, to the next wgmma: {}", list.join(", "));
    }
    let hand_backs = wait_body.map(before_hand_backs).unwrap_or_default();
    if !hand_backs.is_empty() {
        let list: Vec<String> = hand_backs.iter().map(|n| n.map_or("none".into(), |n| n.to_string())).collect();
        println!("instructions between each wgmma wait and the hand-back after it: {}", list.join(", "));
    }
    if let Some(limit) = max_before_hand_back {
        if hand_backs.is_empty() {
            return Err("--max-before-hand-back: the loop has no wgmma wait".into());
        }
        if let Some(late) = hand_backs.iter().find(|n| n.is_none_or(|n| n > limit)) {
            let what = late.map_or("no hand-back before the next wgmma".into(), |n| format!("{n} instructions"));
            return Err(format!(
                "{what} after a wgmma wait (at most {limit} allowed before the buffer's hand-back): read the loop's SASS"
            ));
        }
    }
    match (max_after_wait, waits.iter().max()) {
        (Some(limit), Some(&most)) if most > limit => {
            Err(format!("{most} instructions follow a wgmma wait (at most {limit} allowed): read the loop's SASS"))
        }
        (Some(_), None) => Err("--max-after-wait: the loop has no wgmma wait".into()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SASS: &str = "\
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_0:
        /*0010*/                   HMMA.1688.F32.TF32 R4, R8, R2, R4 ;
        /*0018*/                   HMMA.1688.F32.TF32 R12, R8.reuse, R2, RZ ;
        /*001c*/                   HMMA.1688.F32.TF32 R4, R10, R2, R4 ;
        /*0020*/              @!P3 LDS.128 R136, [R14] ;
        /*0030*/                   FMNMX R5, |R5|, 1.1754943508222875e-38, !PT ;
        /*0038*/              @P2 BRA `(.L_x_2) ;
.L_x_3:
        /*0040*/              @!P1 BRA `(.L_x_0) ;
.L_x_1:
        /*0050*/                   LDS R0, [R1] ;
        /*0060*/                   BRA `(.L_x_1) ;
.L_x_2:
        /*0070*/                   STS.128 [R2], R4 ;
        /*0080*/                   BRA `(.L_x_3) ;
";

    #[test]
    fn finds_the_loop_with_the_mma() {
        let all = loops(SASS);
        let body = hot_loop(SASS, &all).unwrap();
        let c = counts(body);
        // The loop's seven instructions and the two of the block it branches out to.
        assert_eq!(c.iter().map(|(_, n)| n).sum::<usize>(), 9);
        assert!(
            c.contains(&("HMMA", 3)) && c.contains(&("LDS", 1)) && c.contains(&("STS", 1)) && c.contains(&("BRA", 3))
        );
        // The third mma adds to the first one's R4, two mma later.
        assert_eq!(closest_dependent_mma(body), Some(2));
    }

    #[test]
    fn counts_what_follows_a_wgmma_wait() {
        let body = [
            ".L_x_0:",
            "        /*0000*/                   WARPGROUP.ARRIVE ;",
            "        /*0010*/                   HGMMA.64x128x8.F32.TF32 R24, gdesc[UR4], R24 ;",
            "        /*0020*/                   LDS.64 R150, [R150+0xe00] ;",
            "        /*0030*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;",
            "        /*0040*/                   FADD R23, R24, R23 ;",
            "        /*0050*/              @P0 BRA `(.L_x_0) ;",
        ];
        // The FADD and the branch, then round to the ARRIVE.
        assert_eq!(after_waits(&body), [2]);
    }

    #[test]
    fn counts_what_comes_before_the_hand_back() {
        let body = [
            ".L_x_0:",
            "        /*0000*/                   WARPGROUP.ARRIVE ;",
            "        /*0010*/                   HGMMA.64x64x16.F32 R24, gdesc[UR24].tnspA, R24, gsb0 ;",
            "        /*0020*/                   WARPGROUP.DEPBAR.LE gsb0, 0x1 ;",
            "        /*0030*/                   IMAD.HI.U32 R3, R2, 0x2aaaaaab, RZ ;",
            "        /*0040*/              @!P0 SYNCS.ARRIVE.TRANS64.RED.A1T0 RZ, [R6+URZ], RZ ;",
            "        /*0050*/              @P1 BRA `(.L_x_0) ;",
        ];
        // The division's multiply, then the arrival.
        assert_eq!(before_hand_backs(&body), [Some(1)]);
        // A loop whose wait is not followed by an arrival before its next wgmma.
        assert_eq!(before_hand_backs(&[body[0], body[1], body[2], body[3], body[4], body[6]]), [None]);
    }

    #[test]
    fn opcodes_drop_predicates_and_modifiers() {
        assert_eq!(opcode("        /*0020*/              @!P3 LDS.128 R136, [R14] ;"), Some("LDS"));
        assert_eq!(opcode(".L_x_0:"), None);
    }
}
