//! `class.csv`: one row per student, the reason of every failure or refusal in one line. Text from
//! a submission or its name is one quoted field, on one line, and never starts a formula when a
//! spreadsheet opens the file.

use super::html;
use super::roster::Entry;
use serde_json::Value;

/// A text as one CSV field: quoted, quotes doubled, control characters (newlines) as spaces, and a
/// `'` before a first character a spreadsheet would read as a formula (`=`, `+`, `-`, `@`).
pub fn field(text: &str) -> String {
    let line: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let guard = if line.starts_with(['=', '+', '-', '@']) { "'" } else { "" };
    format!("\"{guard}{}\"", line.replace('"', "\"\""))
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
                    field(&html::one_line(&why))
                )
            }
            Err(why) => {
                format!(
                    "{},{},0.0,0,0,0.0,{},{}",
                    e.id,
                    field(&e.name),
                    field(html::kind(why)),
                    field(&html::one_line(why))
                )
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
    }
}
