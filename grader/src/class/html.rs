//! The class report: one self-contained HTML file (inline CSS and SVG, no script, nothing from
//! the network) that reads at a desktop's width and a phone's. Every text from a submission or
//! its name is escaped.

use super::roster::Entry;
use serde_json::Value;
use std::fmt::Write;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// The longest reason a row of the report or the CSV keeps.
const REASON_CHARS: usize = 200;

/// The first line of a reason, with the next where the first ends in `:` (a compile error's
/// first diagnostic), shortened.
pub fn one_line(why: &str) -> String {
    let mut lines = why.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut first = lines.next().unwrap_or("").to_string();
    if first.ends_with(':') {
        first = format!("{first} {}", lines.next().unwrap_or(""));
    }
    let mut out: String = first.trim_end().chars().take(REASON_CHARS).collect();
    if first.chars().count() > REASON_CHARS {
        out.push_str("...");
    }
    out
}

/// (passed, scored) cases of a card.
pub fn counts(card: &Value) -> (usize, usize) {
    let tests = card["tests"].as_array().map(Vec::as_slice).unwrap_or_default();
    let scored: Vec<&Value> = tests.iter().filter(|t| t["max_score"].as_f64().unwrap_or(0.0) > 0.0).collect();
    (scored.iter().filter(|t| t["score"].as_f64() == t["max_score"].as_f64()).count(), scored.len())
}

/// Points for speed on a card.
pub fn speed_points(card: &Value) -> f64 {
    let tests: f64 =
        card["tests"].as_array().map(|t| t.iter().filter_map(|t| t["score"].as_f64()).sum()).unwrap_or(0.0);
    (card["score"].as_f64().unwrap_or(0.0) - tests).max(0.0)
}

/// The first failure of a card, or `None` for a card with none: a scored case or stage that
/// failed, else why grading stopped, else why a correct kernel was not timed.
pub fn first_failure(card: &Value) -> Option<String> {
    let tests = card["tests"].as_array()?;
    let no_gpu = card["mode"] == "no-gpu";
    let failed =
        tests.iter().find(|t| t["max_score"].as_f64().unwrap_or(0.0) > 0.0 && t["score"].as_f64() == Some(0.0));
    match failed {
        Some(t) => Some(format!("{}: {}", t["name"].as_str().unwrap_or(""), t["output"].as_str().unwrap_or(""))),
        None if card["stopped"].is_string() => card["stopped"].as_str().map(str::to_string),
        None if !no_gpu && card["speed"].is_null() => card["speed_note"].as_str().map(str::to_string),
        None => None,
    }
}

/// A card's result in a few words: the kind of its first failure, or that it passed.
pub fn result(card: &Value) -> &'static str {
    match first_failure(card) {
        Some(why) => kind(&why),
        None if card["mode"] == "no-gpu" => "compiles (no GPU: cases not run)",
        None => "passed",
    }
}

/// The kind of a failure, to group students by.
pub fn kind(why: &str) -> &'static str {
    let w = why.to_lowercase();
    // Why a student has no card: how Slurm ended the task, or a fault of the machine.
    if w.starts_with("task ") || w.contains("no task ran") {
        return "the Slurm task did not finish";
    }
    if w.starts_with("not graded") {
        return "not graded (the machine failed)";
    }
    let rules: &[(&str, &str)] = &[
        ("is a symbolic link", "refused: a symbolic link"),
        ("not a regular file", "refused: not a regular file"),
        ("the limit is", "refused: too large"),
        ("nul byte", "refused: a NUL byte"),
        ("is empty", "refused: empty"),
        ("defines no kernel", "no `sgemm` kernel"),
        ("a variant that only hidden cases use", "does not compile"),
        ("include policy", "an include that is not allowed"),
        ("does not compile", "does not compile"),
        ("compiler stopped", "the compiler ran out of time or memory"),
        ("no submission found", "no submission"),
        ("several .cu files", "several .cu files"),
        ("budget exhausted", "grading budget exhausted"),
        ("timed out", "timed out"),
        ("not timed: a fault", "a fault in a timed run"),
        ("a timed run produced a wrong result", "a timed run produced a wrong result"),
        ("a fault", "a fault on the GPU"),
        ("memory errors", "memory errors (compute-sanitizer)"),
        ("wrote outside", "wrote outside its buffers"),
        ("modified its inputs", "modified its inputs"),
        ("crashed", "crashed"),
        ("exact answer", "a precision probe (not FP32 arithmetic)"),
    ];
    rules.iter().find(|(needle, _)| w.contains(needle)).map_or("wrong results", |(_, k)| k)
}

fn histogram(scores: &[f64]) -> String {
    let mut bins = [0usize; 10];
    for s in scores {
        bins[((s / 10.0).floor() as usize).min(9)] += 1;
    }
    let max = *bins.iter().max().unwrap_or(&1).max(&1) as f64;
    let (w, h, bar) = (600.0, 220.0, 60.0);
    let mut svg =
        format!("<svg viewBox=\"0 0 {w} {}\" role=\"img\" aria-label=\"score histogram\" class=\"chart\">", h + 40.0);
    for (i, &n) in bins.iter().enumerate() {
        let bh = (n as f64 / max) * h;
        let x = i as f64 * bar;
        let _ = write!(
            svg,
            "<rect x=\"{:.0}\" y=\"{:.1}\" width=\"{:.0}\" height=\"{bh:.1}\" class=\"bar\"><title>{n} students</title></rect>\
             <text x=\"{:.0}\" y=\"{:.1}\" class=\"n\">{n}</text><text x=\"{:.0}\" y=\"{:.0}\" class=\"tick\">{}</text>",
            x + 4.0,
            h - bh,
            bar - 8.0,
            x + bar / 2.0,
            (h - bh - 4.0).max(12.0),
            x + bar / 2.0,
            h + 18.0,
            if i == 9 { "90-100".to_string() } else { format!("{}-{}", i * 10, i * 10 + 9) }
        );
    }
    svg + &format!("<text x=\"{}\" y=\"{}\" class=\"tick\">score</text></svg>", w / 2.0, h + 36.0)
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1rem auto;max-width:70rem;padding:0 1rem;color:#222}\
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem}.chart{width:100%;max-width:600px;height:auto}\
.bar{fill:#4878a8}.n,.tick{font-size:13px;text-anchor:middle;fill:#333}.scroll{overflow-x:auto}\
table{border-collapse:collapse;font-size:.9rem}td,th{padding:.25rem .5rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}\
td.num{text-align:right}.why{min-width:14rem;max-width:32rem;overflow-wrap:anywhere}.meter{background:#e6e6e6;width:10rem;max-width:40vw;height:.8rem}\
.meter div{background:#4878a8;height:100%}ul{padding-left:1.2rem}li{overflow-wrap:anywhere}\
.note{background:#fff3cd;border-left:4px solid #c69500;padding:.5rem .75rem;overflow-wrap:anywhere}";

/// What a report of cards graded without a GPU says first.
pub const NO_GPU: &str = "Graded without a GPU (--no-gpu): only the include policy and the compile were checked, \
                          no case ran, so the scores below are not grades.";

/// The report of a class; `results` in roster order.
pub fn report(step: &str, results: &[(Entry, Result<Value, String>)]) -> String {
    let no_gpu = results.iter().any(|(_, r)| r.as_ref().is_ok_and(|c| c["mode"] == "no-gpu"));
    let scores: Vec<f64> =
        results.iter().map(|(_, r)| r.as_ref().map_or(0.0, |c| c["score"].as_f64().unwrap_or(0.0))).collect();
    let graded = results.iter().filter(|(_, r)| r.is_ok()).count();
    let mut sorted = scores.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0.0);
    let mut page = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{0}: class report{3}</title><style>{STYLE}</style></head><body><h1>{0}: class report{3}</h1>{4}\
         <p>{1} students, {graded} graded; median score {median:.1} of 100.</p><h2>Scores</h2>{2}",
        esc(step),
        results.len(),
        histogram(&scores),
        if no_gpu { " (no GPU)" } else { "" },
        if no_gpu { format!("<p class=\"note\"><b>{}</b></p>", esc(NO_GPU)) } else { String::new() },
    );
    // Speed of the submissions with every case correct.
    page += "<h2>Speed of the correct submissions</h2><div class=\"scroll\"><table><tr><th>student</th><th>of the reference</th><th></th><th>of cuBLAS</th><th></th></tr>";
    for (e, r) in results {
        let Ok(card) = r else { continue };
        let p = &card["performance"];
        let (Some(sub), Some(reference), Some(blas)) =
            (p["submission_ms"].as_f64(), p["reference_ms"].as_f64(), p["cublas_ms"].as_f64())
        else {
            continue;
        };
        let (r, b) = (100.0 * reference / sub, 100.0 * blas / sub);
        let _ = write!(
            page,
            "<tr><td>{}</td><td class=\"num\">{r:.0}%</td><td><div class=\"meter\"><div style=\"width:{:.0}%\"></div></div></td>\
             <td class=\"num\">{b:.1}%</td><td><div class=\"meter\"><div style=\"width:{:.0}%\"></div></div></td></tr>",
            esc(&e.id),
            r.min(100.0),
            b.min(100.0)
        );
    }
    page += "</table></div><h2>Failures, by kind</h2>";
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for (e, r) in results {
        let why = match r {
            Ok(card) => first_failure(card),
            Err(why) => Some(why.clone()),
        };
        if let Some(why) = why {
            let k = kind(&why);
            match groups.iter_mut().find(|(g, _)| *g == k) {
                Some((_, ids)) => ids.push(&e.id),
                None => groups.push((k, vec![&e.id])),
            }
        }
    }
    groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
    if groups.is_empty() {
        page += "<p>None.</p>";
    } else {
        page += "<ul>";
        for (k, ids) in &groups {
            let names: Vec<String> = ids.iter().map(|i| esc(i)).collect();
            let _ = write!(page, "<li><b>{}</b> ({}): {}</li>", esc(k), ids.len(), names.join(", "));
        }
        page += "</ul>";
    }
    page += "<h2>Students</h2><div class=\"scroll\"><table><tr><th>student</th><th>score</th><th>cases</th><th>speed</th><th>first failure</th></tr>";
    for (e, r) in results {
        let (score, cases, speed, why) = match r {
            Ok(card) => {
                let (p, s) = counts(card);
                let why = first_failure(card).unwrap_or_default();
                (card["score"].as_f64().unwrap_or(0.0), format!("{p}/{s}"), format!("{:.1}", speed_points(card)), why)
            }
            Err(why) => (0.0, "-".into(), "-".into(), why.clone()),
        };
        let why = one_line(&why);
        let _ = write!(
            page,
            "<tr><td><a href=\"cards/{0}.txt\">{0}</a><br><small>{1}</small></td><td class=\"num\">{score:.1}</td>\
             <td class=\"num\">{cases}</td><td class=\"num\">{speed}</td><td class=\"why\">{2}</td></tr>",
            esc(&e.id),
            esc(&e.name),
            esc(&why)
        );
    }
    page + "</table></div></body></html>\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_report_escapes_and_groups() {
        let card = |score: f64, fail: Option<&str>| {
            let mut tests = vec![json!({"name": "public 1x1x1", "score": 1.0, "max_score": 1.0, "output": "ok"})];
            if let Some(f) = fail {
                tests.push(json!({"name": "public 33x31x32", "score": 0.0, "max_score": 1.0, "output": f}));
            }
            json!({"score": score, "tests": tests, "performance": null, "stopped": null, "speed_note": ""})
        };
        let e = |id: &str, name: &str| Entry { id: id.into(), name: name.into(), file: Ok("x.cu".into()) };
        let results = vec![
            (e("a", "<script>alert(1)</script>"), Ok(card(100.0, None))),
            (e("b", "b"), Ok(card(35.0, Some("crashed (signal 11)")))),
            (e("c", "c"), Ok(card(35.0, Some("crashed (signal 6)")))),
            (e("d", "d"), Err("no submission found: the folder holds no .cu file".into())),
        ];
        let page = report("step04-bankfree", &results);
        assert!(!page.contains("<script>") && page.contains("&lt;script&gt;"));
        assert!(page.contains("<b>crashed</b> (2): b, c"), "{page}");
        assert!(page.contains("<b>no submission</b> (1): d"));
        assert!(page.contains("href=\"cards/a.txt\""));
        assert_eq!(page, report("step04-bankfree", &results), "the same cards give the same report");
        assert!(!page.contains("http"), "nothing from the network");
        assert!(!page.contains("no GPU"));
    }

    /// A report of a --no-gpu grading says so first; a refusal and a fault in a timed run are
    /// failures with their reason, the fault keeping the correctness points.
    #[test]
    fn no_gpu_refusals_and_faults_are_named() {
        let e = |id: &str| Entry { id: id.into(), name: id.into(), file: Ok("x.cu".into()) };
        let compiles = json!({"score": 0.0, "mode": "no-gpu", "speed": null, "stopped": null, "speed_note": "",
            "tests": [{"name": "compile", "score": 0.0, "max_score": 0.0, "output": "compiles for sm_90"}]});
        let link = json!({"score": 0.0, "mode": "no-gpu", "speed": null, "stopped": null, "speed_note": "",
            "tests": [{"name": "submission", "score": 0.0, "max_score": 70.0,
                       "output": "refused: link.cu is a symbolic link, not a regular file: submit the kernel's .cu file itself"}]});
        let fault = json!({"score": 70.0, "mode": "gpu", "speed": null, "stopped": null,
            "speed_note": "not timed: a fault: an illegal memory access; a timed run failed",
            "tests": [{"name": "public 1x1x1", "score": 70.0, "max_score": 70.0, "output": "ok"},
                      {"name": "timed runs at 2048x2048x2048", "score": 0.0, "max_score": 0.0, "output": "a fault"}]});
        assert_eq!(result(&compiles), "compiles (no GPU: cases not run)");
        assert_eq!(result(&link), "refused: a symbolic link");
        assert_eq!(result(&fault), "a fault in a timed run");
        // A kind comes from the reason, not from a file name inside it.
        assert_eq!(kind("public 7x11x13 alpha=1 beta=0: multitask.cu (fp32) on 7x11x13: 3 wrong"), "wrong results");
        assert_eq!(kind("task cancelled"), "the Slurm task did not finish");
        assert_eq!(one_line("\nk.cu(3): error: x\n  x = 1;\n"), "k.cu(3): error: x");
        assert_eq!(
            one_line("k.cu does not compile for sm_90:\nk.cu(3): error: x\n"),
            "k.cu does not compile for sm_90: k.cu(3): error: x"
        );
        assert!(one_line(&"y".repeat(500)).ends_with("..."));
        assert_eq!(kind("not graded: no NVRTC"), "not graded (the machine failed)");
        let page = report("step04-bankfree", &[(e("a"), Ok(compiles)), (e("link"), Ok(link))]);
        assert!(page.contains("class report (no GPU)") && page.contains(NO_GPU), "{page}");
        assert!(page.contains("link.cu is a symbolic link"));
    }
}
