//! The score card: what the student sees printed, and the same as Gradescope's `results.json`,
//! always written (atomically: a crash never leaves half a file), whatever the submission did;
//! and the staff's record beside it, with what students must not see: the hidden cases' shapes,
//! results and output, and the compiler's whole log.

use serde_json::{Value, json};
use std::path::Path;
use std::time::Instant;

/// Points for correctness and for speed; the card's total is out of their sum.
pub const CORRECTNESS_POINTS: f64 = 70.0;
pub const PERFORMANCE_POINTS: f64 = 30.0;

/// A submission within this fraction of the reference solution's speed gets every speed
/// point: the reference graded against itself differs from 1 only by the timing spread.
pub const FULL_SPEED: f64 = 0.95;

/// The most of what the submission printed that the card shows: of the public runs only.
pub const SHOWN_OUTPUT_CAP: usize = 16 * 1024;

/// The most of what the submission printed that the staff's record keeps.
const STAFF_OUTPUT_CAP: usize = 1 << 20;

/// What the card says of `submission_output`.
fn output_note() -> String {
    format!(
        "what the kernel printed while the public cases, the probes, the memcheck run and the timed runs ran, \
         the first {SHOWN_OUTPUT_CAP} bytes; what it printed while a hidden case ran is not shown"
    )
}

/// One line of the card.
#[derive(Clone, Debug)]
pub struct Test {
    pub name: String,
    pub passed: bool,
    /// Whether it counts towards the correctness points (an empty C, or a stage that did not
    /// run for lack of a tool, does not).
    pub scored: bool,
    pub output: String,
    /// What the staff's record says instead, where the student sees less (a hidden case).
    pub staff: Option<String>,
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
    /// What the public runs printed, capped at [`SHOWN_OUTPUT_CAP`].
    pub submission_output: String,
    /// The staff's notes and every child's output, for the staff's record.
    staff_notes: Vec<String>,
    staff_output: String,
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
            staff_notes: Vec::new(),
            staff_output: String::new(),
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
        self.push_test(Test { name: name.into(), passed, scored, output: output.into(), staff: None });
    }

    /// A line the student sees as `shown` and the staff's record as `staff`.
    pub fn push_hidden(&mut self, name: String, passed: bool, scored: bool, shown: &str, staff: String) {
        self.push_test(Test { name, passed, scored, output: shown.into(), staff: Some(staff) });
    }

    fn push_test(&mut self, t: Test) {
        // A failure shows its whole reason (a compile log has many lines); a pass one line.
        let shown: Vec<&str> = t.output.lines().take(if t.passed { 1 } else { 40 }).collect();
        println!("{} {}: {}", if t.passed { "pass" } else { "FAIL" }, t.name, shown.join("\n    "));
        self.tests.push(t);
    }

    /// A note for the staff's record alone.
    pub fn staff_note(&mut self, note: impl Into<String>) {
        self.staff_notes.push(note.into());
    }

    /// What a child running the submission printed, from `what` (a stage): on the card, capped,
    /// only where no hidden case ran in that child; in the staff's record always.
    pub fn output(&mut self, what: &str, text: &str, hidden: bool) {
        if text.is_empty() {
            return;
        }
        let room = STAFF_OUTPUT_CAP.saturating_sub(self.staff_output.len());
        self.staff_output += &format!("--- {what}{}:\n", if hidden { " (hidden)" } else { "" });
        self.staff_output.extend(capped(text, room));
        if !self.staff_output.ends_with('\n') {
            self.staff_output.push('\n');
        }
        if !hidden {
            let room = SHOWN_OUTPUT_CAP.saturating_sub(self.submission_output.len());
            self.submission_output.extend(capped(text, room));
        }
    }

    /// The staff's record: every line of the card as the staff may see it, the notes, the output.
    pub fn staff_record(&self) -> String {
        let mut out = format!("staff record of {} ({}, {}): not for students\n", self.file, self.step, self.mode);
        for t in &self.tests {
            let text = t.staff.as_deref().unwrap_or(&t.output);
            out += &format!("{} {}: {text}\n", if t.passed { "pass" } else { "FAIL" }, t.name);
        }
        for note in &self.staff_notes {
            out += &format!("{note}\n");
        }
        if !self.staff_output.is_empty() {
            out += &format!("what the kernel printed (each child, {STAFF_OUTPUT_CAP} bytes in all at most):\n");
            out += &self.staff_output;
        }
        out
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
        if !self.submission_output.is_empty() {
            println!("  output: {} bytes in submission_output ({})", self.submission_output.len(), output_note());
        }
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
            "speed": self.speed,
            "speed_note": self.speed_note,
            "mode": self.mode,
            "confinement": self.confinement,
            "submission_output": self.submission_output,
            "submission_output_note": output_note(),
            "stopped": self.stopped,
            "grading_seconds": self.started.elapsed().as_secs_f64(),
            "stage_seconds": self.stages.iter().map(|(s, t)| (s.to_string(), json!(t))).collect::<serde_json::Map<_, _>>(),
        })
    }
}

/// The characters of `text` that fit in `room` bytes.
fn capped(text: &str, room: usize) -> impl Iterator<Item = char> + '_ {
    text.chars().scan(0, move |n, c| {
        *n += c.len_utf8();
        (*n <= room).then_some(c)
    })
}

/// Writes `value` to `path` so that a reader sees the old file or the whole new one.
pub fn write_atomically(path: &Path, value: &Value) -> Result<(), String> {
    write_text_atomically(path, &(serde_json::to_string_pretty(value).map_err(|e| e.to_string())? + "\n"))
}

/// Writes `text` to `path` so that a reader sees the old file or the whole new one.
pub fn write_text_atomically(path: &Path, text: &str) -> Result<(), String> {
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

    /// What the kernel prints while a hidden case runs, and a hidden case's shape, reach the
    /// staff's record and never the card; the public output is capped.
    #[test]
    fn hidden_stays_in_the_staff_record() {
        let mut c = Card::new("step04-bankfree", "k.cu", "gpu");
        c.output("cases", "CASE 33 31 32\n", false);
        c.output("cases", "CASE 257 129 65\n", true);
        c.push_hidden("hidden case 1".into(), false, true, "failed", "257x129x65: wrong result".into());
        c.output("timed runs", &"x".repeat(2 * SHOWN_OUTPUT_CAP), false);
        let card = c.to_json().to_string();
        assert!(card.contains("CASE 33 31 32") && !card.contains("257"), "{card}");
        assert_eq!(c.submission_output.len(), SHOWN_OUTPUT_CAP);
        assert!(c.to_json()["submission_output_note"].as_str().unwrap().contains("16384 bytes"));
        let staff = c.staff_record();
        assert!(
            staff.contains("CASE 257 129 65") && staff.contains("hidden case 1: 257x129x65: wrong result"),
            "{staff}"
        );
    }
}
