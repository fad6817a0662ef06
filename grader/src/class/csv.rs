//! `class.csv`: one row per student, the reason of every failure or refusal in one line. Text from
//! a submission or its name is one quoted field, on one line, and never starts a formula when a
//! spreadsheet opens the file.

use super::html;
use super::roster::Entry;
use serde_json::Value;

/// The longest reason a row keeps.
const REASON_CHARS: usize = 200;

/// A text as one CSV field: quoted, quotes doubled, control characters (newlines) as spaces, and a
/// `'` before a first character a spreadsheet would read as a formula (`=`, `+`, `-`, `@`).
pub fn field(text: &str) -> String {
    let line: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let guard = if line.starts_with(['=', '+', '-', '@']) { "'" } else { "" };
    format!("\"{guard}{}\"", line.replace('"', "\"\""))
}

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

/// The class's CSV, rows in roster order.
pub fn class_csv(results: &[(Entry, Result<Value, String>)]) -> String {
    let mut csv = String::from("id,name,score,correctness_passed,correctness_scored,speed,result,reason\n");
    for (e, r) in results {
        let line = match r {
            Ok(card) => {
                let (passed, scored) = html::counts(card);
                let why = html::first_failure(card).unwrap_or_default();
                format!(
                    "{},{},{:.1},{passed},{scored},{:.1},{},{}",
                    e.id,
                    field(&e.name),
                    card["score"].as_f64().unwrap_or(0.0),
                    html::speed_points(card),
                    field(html::result(card)),
                    field(&one_line(&why))
                )
            }
            Err(why) => {
                format!("{},{},0.0,0,0,0.0,{},{}", e.id, field(&e.name), field(html::kind(why)), field(&one_line(why)))
            }
        };
        csv += &line;
        csv.push('\n');
    }
    csv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_one_line_and_never_formulas() {
        assert_eq!(field("Doe, Jane \"JD\""), "\"Doe, Jane \"\"JD\"\"\"");
        assert_eq!(field("=1+1.cu"), "\"'=1+1.cu\"");
        assert_eq!(field("-rf.cu"), "\"'-rf.cu\"");
        assert_eq!(field("new\nline\r.cu"), "\"new line .cu\"");
        assert_eq!(one_line("\nk.cu(3): error: x\n  x = 1;\n"), "k.cu(3): error: x");
        assert_eq!(
            one_line("k.cu does not compile for sm_90:\nk.cu(3): error: x\n"),
            "k.cu does not compile for sm_90: k.cu(3): error: x"
        );
        assert!(one_line(&"y".repeat(500)).ends_with("..."));
    }
}
