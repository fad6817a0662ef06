//! The score card: what the student sees printed, and the same as Gradescope's `results.json`,
//! always written (atomically: a crash never leaves half a file), whatever the submission did.

use serde_json::{Value, json};
use std::path::Path;
use std::time::Instant;

/// Points for correctness and for speed; the card's total is out of their sum.
pub const CORRECTNESS_POINTS: f64 = 70.0;
pub const PERFORMANCE_POINTS: f64 = 30.0;

/// A submission within this fraction of the reference solution's speed gets every speed
/// point: the reference graded against itself differs from 1 only by the timing spread.
pub const FULL_SPEED: f64 = 0.95;

/// One line of the card.
#[derive(Clone, Debug)]
pub struct Test {
    pub name: String,
    pub passed: bool,
    /// Whether it counts towards the correctness points (an empty C, or a stage that did not
    /// run for lack of a tool, does not).
    pub scored: bool,
    pub output: String,
}

/// Everything the card reports.
pub struct Card {
    pub step: String,
    pub file: String,
    pub mode: &'static str,
    pub tests: Vec<Test>,
    /// Speed points and what they came from (`None`: not timed, with the reason in `speed_note`).
    pub speed: Option<f64>,
    pub speed_note: String,
    pub performance: Value,
    pub confinement: String,
    pub submission_output: String,
    /// Why grading stopped early, if it did.
    pub stopped: Option<String>,
    pub started: Instant,
    /// Seconds each stage took.
    pub stages: Vec<(&'static str, f64)>,
}

impl Card {
    pub fn new(step: &str, file: &str, mode: &'static str) -> Card {
        Card {
            step: step.into(),
            file: file.into(),
            mode,
            tests: Vec::new(),
            speed: None,
            speed_note: String::new(),
            performance: Value::Null,
            confinement: String::new(),
            submission_output: String::new(),
            stopped: None,
            started: Instant::now(),
            stages: Vec::new(),
        }
    }

    /// Runs one stage of the grading and records how long it took.
    pub fn timed<T>(&mut self, stage: &'static str, run: impl FnOnce(&mut Card) -> T) -> T {
        let start = Instant::now();
        let out = run(self);
        self.stages.push((stage, start.elapsed().as_secs_f64()));
        out
    }

    pub fn push(&mut self, name: impl Into<String>, passed: bool, scored: bool, output: impl Into<String>) {
        let t = Test { name: name.into(), passed, scored, output: output.into() };
        // A failure shows its whole reason (a compile log has many lines); a pass one line.
        let shown: Vec<&str> = t.output.lines().take(if t.passed { 1 } else { 40 }).collect();
        println!("{} {}: {}", if t.passed { "pass" } else { "FAIL" }, t.name, shown.join("\n    "));
        self.tests.push(t);
    }

    pub fn scored(&self) -> (usize, usize) {
        let scored = self.tests.iter().filter(|t| t.scored);
        (scored.clone().filter(|t| t.passed).count(), scored.count())
    }

    pub fn all_passed(&self) -> bool {
        let (passed, scored) = self.scored();
        passed == scored && scored > 0
    }

    pub fn correctness(&self) -> f64 {
        let (passed, scored) = self.scored();
        CORRECTNESS_POINTS * passed as f64 / scored.max(1) as f64
    }

    pub fn score(&self) -> f64 {
        self.correctness() + self.speed.unwrap_or(0.0)
    }

    /// Prints the card.
    pub fn print(&self) {
        let (passed, scored) = self.scored();
        println!(
            "\nscore card, {} ({}):\n  correctness {passed}/{scored} scored cases: {:.1} / {CORRECTNESS_POINTS}\n  \
             speed vs the reference solution: {:.1} / {PERFORMANCE_POINTS}{}\n  total: {:.1} / {}\n  \
             graded in {:.1} s{}",
            self.step,
            self.file,
            self.correctness(),
            self.speed.unwrap_or(0.0),
            if self.speed_note.is_empty() { String::new() } else { format!(" ({})", self.speed_note) },
            self.score(),
            CORRECTNESS_POINTS + PERFORMANCE_POINTS,
            self.started.elapsed().as_secs_f64(),
            self.stopped.as_ref().map_or(String::new(), |why| format!("; stopped early: {why}")),
        );
    }

    /// Gradescope's results.json, with the grader's own fields beside.
    pub fn to_json(&self) -> Value {
        let (passed, scored) = self.scored();
        let per_case = CORRECTNESS_POINTS / scored.max(1) as f64;
        let tests: Vec<Value> = self
            .tests
            .iter()
            .map(|t| {
                let max = if t.scored { per_case } else { 0.0 };
                json!({ "name": t.name, "score": if t.passed { max } else { 0.0 }, "max_score": max, "output": t.output })
            })
            .collect();
        json!({
            "score": self.score(),
            "max_score": CORRECTNESS_POINTS + PERFORMANCE_POINTS,
            "output": format!(
                "{} correctness {passed}/{scored} scored cases, speed {:.1}/{PERFORMANCE_POINTS}{}",
                self.step,
                self.speed.unwrap_or(0.0),
                self.stopped.as_ref().map_or(String::new(), |w| format!("; stopped early: {w}"))
            ),
            "tests": tests,
            "performance": self.performance,
            "speed_note": self.speed_note,
            "mode": self.mode,
            "confinement": self.confinement,
            "submission_output": self.submission_output,
            "stopped": self.stopped,
            "grading_seconds": self.started.elapsed().as_secs_f64(),
            "stage_seconds": self.stages.iter().map(|(s, t)| (s.to_string(), json!(t))).collect::<serde_json::Map<_, _>>(),
        })
    }
}

/// Writes `value` to `path` so that a reader sees the old file or the whole new one.
pub fn write_atomically(path: &Path, value: &Value) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())? + "\n";
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_follow_the_scored_tests() {
        let mut c = Card::new("step04-bankfree", "k.cu", "gpu");
        c.push("a", true, true, "ok");
        c.push("b", false, true, "wrong");
        c.push("empty C", false, false, "not scored");
        assert_eq!(c.scored(), (1, 2));
        assert_eq!(c.correctness(), 35.0);
        c.speed = Some(30.0);
        assert_eq!(c.score(), 65.0);
        let j = c.to_json();
        assert_eq!(j["tests"][2]["max_score"], 0.0);
        assert_eq!(j["max_score"], 100.0);
        let path = std::env::temp_dir().join(format!("card-{}.json", std::process::id()));
        write_atomically(&path, &j).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&std::fs::read_to_string(&path).unwrap()).unwrap()["score"], 65.0);
        std::fs::remove_file(&path).unwrap();
    }
}
