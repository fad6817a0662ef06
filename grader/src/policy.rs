//! What a submission may include, and what of the compiler's log a student sees.
//!
//! A submission is compiled alone (an empty directory, the step's headers served from memory),
//! and before that its text is read the way the preprocessor will read it: line splices joined,
//! comments removed, `%:` read as `#`. Every `#include` (and `#include_next`, `#import`,
//! `#embed`) must name one of the headers served with the step's kernel in quotes (the shared
//! ones and those of step crates it builds on) or an allowed CUDA header in angle brackets,
//! literally; `__has_include` is refused too (it tells whether any file exists).
//! Anything else, a computed include among it, is refused with the line it is on.

use common::Step;

/// CUDA headers a kernel of the ladder may use, in angle brackets: what the steps' kernels
/// include, and what they would reasonably reach for.
pub const CUDA_HEADERS: &[&str] = &[
    "mma.h",
    "cuda_fp16.h",
    "cuda_bf16.h",
    "cuda_pipeline.h",
    "cuda/pipeline",
    "cuda/barrier",
    "cuda/ptx",
    "cooperative_groups.h",
    "cooperative_groups/memcpy_async.h",
    "cooperative_groups/reduce.h",
    "cuda/std/cstdint",
    "cuda/std/type_traits",
    "cuda/std/limits",
    "cuda/std/utility",
    "cuda/std/array",
];

/// The directives that read another file.
const FILE_DIRECTIVES: &[&str] = &["include", "include_next", "import", "embed"];

/// The submission as the preprocessor sees its lines: splices joined, comments blanked (string
/// and character literals kept), each logical line with the physical line it starts on.
fn logical_lines(source: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let (mut line, mut start) = (String::new(), 1);
    let (mut physical, mut in_block) = (1, false);
    let chars: Vec<char> = source.chars().collect();
    let mut i = 0;
    let mut quote: Option<char> = None;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        // A backslash before a newline joins the lines, everywhere (even in comments).
        if c == '\\' && (next == Some('\n') || (next == Some('\r') && chars.get(i + 2) == Some(&'\n'))) {
            i += if next == Some('\r') { 3 } else { 2 };
            physical += 1;
            continue;
        }
        if c == '\n' {
            physical += 1;
            if !in_block {
                out.push((start, std::mem::take(&mut line)));
                start = physical;
                quote = None;
            }
            i += 1;
            continue;
        }
        if in_block {
            if c == '*' && next == Some('/') {
                in_block = false;
                line.push(' ');
                i += 2;
            } else {
                i += 1;
            }
            continue;
        }
        match quote {
            Some(q) => {
                line.push(c);
                if c == '\\' {
                    if let Some(n) = next {
                        line.push(n);
                        i += 1;
                    }
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '/' && next == Some('/') => {
                // To the end of the line (a splice already joined the next one).
                while i < chars.len() && chars[i] != '\n' {
                    if chars[i] == '\\' && chars.get(i + 1) == Some(&'\n') {
                        physical += 1;
                        i += 1;
                    }
                    i += 1;
                }
                continue;
            }
            None if c == '/' && next == Some('*') => {
                in_block = true;
                i += 2;
                continue;
            }
            None if c == '"' && raw_prefix(&chars[..i]) => {
                // A raw string R"delim( ... )delim": nothing in it is a comment or a quote.
                let open =
                    chars[i + 1..].iter().position(|&c| c == '(' || c == '\n').map_or(chars.len(), |p| i + 1 + p);
                let delim: String = chars[i + 1..open.min(chars.len())].iter().collect();
                let close: Vec<char> = format!("){delim}\"").chars().collect();
                let mut j = open + 1;
                while j < chars.len() && !chars[j..].starts_with(&close) {
                    if chars[j] == '\n' {
                        physical += 1;
                    }
                    j += 1;
                }
                line.push_str("\"\"");
                i = (j + close.len()).min(chars.len());
                continue;
            }
            None => {
                if c == '"' || c == '\'' {
                    quote = Some(c);
                }
                line.push(c);
            }
        }
        i += 1;
    }
    out.push((start, line));
    out
}

/// Whether the text before a `"` makes it a raw string: `R`, `u8R`, `uR`, `UR` or `LR`, not
/// the end of a longer identifier.
fn raw_prefix(before: &[char]) -> bool {
    let ident = |c: &char| c.is_ascii_alphanumeric() || *c == '_';
    let word: String = before.iter().rev().take_while(|c| ident(c)).collect::<Vec<_>>().into_iter().rev().collect();
    matches!(word.as_str(), "R" | "u8R" | "uR" | "UR" | "LR")
}

/// The directive name and its argument text, if `line` is a preprocessing directive.
fn directive(line: &str) -> Option<(String, String)> {
    let t = line.trim_start();
    let rest = t.strip_prefix('#').or_else(|| t.strip_prefix("%:"))?.trim_start();
    let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    Some((name.clone(), rest[name.len()..].trim().to_string()))
}

/// Refuses what a submission for `step` may not include; `name` is how the file is named in
/// messages.
pub fn check_includes(step: &Step, name: &str, source: &str) -> Result<(), String> {
    let own: Vec<&str> = step.kernel.served().iter().map(|(header, _)| *header).collect();
    for (line_no, line) in logical_lines(source) {
        if line.contains("__has_include") {
            return Err(format!(
                "{name}({line_no}): `__has_include` is not allowed in a submission (it asks whether a file exists)"
            ));
        }
        let Some((directive, arg)) = directive(&line) else { continue };
        if !FILE_DIRECTIVES.contains(&directive.as_str()) {
            continue;
        }
        let allowed = match (arg.strip_prefix('"'), arg.strip_prefix('<')) {
            (Some(rest), _) => rest.strip_suffix('"').filter(|h| !h.contains('"')).is_some_and(|h| own.contains(&h)),
            (_, Some(rest)) => {
                rest.strip_suffix('>').filter(|h| !h.contains('>')).is_some_and(|h| CUDA_HEADERS.contains(&h))
            }
            _ => false,
        };
        if directive != "include" || !allowed {
            return Err(format!(
                "{name}({line_no}): `#{directive} {arg}` is not allowed: a submission may include only its step's \
                 headers (\"{}\") and CUDA headers such as <{}>, written literally",
                own.join("\", \""),
                CUDA_HEADERS[..3].join(">, <")
            ));
        }
    }
    Ok(())
}

/// NVRTC's log as the student may see it: diagnostics about the submission itself in full;
/// for any other file only the line that names the diagnostic, without the source text the
/// compiler quotes under it (which would be that file's contents).
pub fn filter_log(submission: &str, log: &str) -> String {
    let mut out = Vec::new();
    let mut quoting = true;
    for line in log.lines() {
        // A diagnostic starts with `file(line): ` (NVRTC's format).
        if let Some((file, _)) = line.split_once("): ").and_then(|(head, _)| head.rsplit_once('(')) {
            if !file.is_empty() && !file.contains(' ') {
                quoting = file == submission;
                if quoting {
                    out.push(line.to_string());
                } else {
                    let what = line.split_once("): ").map_or("", |(_, w)| w);
                    let what: String = what.chars().take(200).collect();
                    out.push(format!("(a file the submission does not own): {what}"));
                }
                continue;
            }
        }
        if quoting {
            out.push(line.to_string());
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(src: &str) -> Result<(), String> {
        check_includes(&steps::ALL[0], "s.cu", src)
    }

    fn refused(src: &str) -> bool {
        check(src).is_err()
    }

    #[test]
    fn the_step_headers_and_cuda_headers_pass() {
        let ok = "#include \"sgemm.cuh\"\n  #  include <mma.h>\n#include <cuda/pipeline>\n// #include \"/etc/passwd\"\n\
                  /* #include \"/proc/self/environ\" */\nconst char* s = \"#include </dev/zero>\";\n#define X 1\n";
        assert_eq!(check(ok), Ok(()));
    }

    /// A header of a step crate is served to the steps that build on it alone.
    #[test]
    fn a_step_header_passes_where_it_is_served() {
        let (owner, later) = (steps::find("11").unwrap(), steps::find("12").unwrap());
        let include = "#include \"schedule.cuh\"\n";
        assert!(check_includes(owner, "s.cu", include).is_ok() && check_includes(later, "s.cu", include).is_ok());
        assert!(check_includes(steps::find("10").unwrap(), "s.cu", include).unwrap_err().contains("hopper.cuh"));
    }

    #[test]
    fn everything_else_is_refused() {
        for bad in [
            "#include \"/proc/self/cmdline\"",
            "#include \"../hidden.txt\"",
            "#include \"hidden.txt\"",
            "#include </etc/passwd>",
            "#include <../../etc/passwd>",
            "#include \"sgemm.cuh\" \"x\"",
            "#define F \"/proc/self/environ\"\n#include F",
            "#include_next <mma.h>",
            "#import \"x.h\"",
            "#embed \"/dev/urandom\"",
            "%:include \"/etc/hostname\"",
            "%:  include </dev/stdin>",
            "#inc\\\nlude \"/etc/hostname\"",
            "#include \\\n\"/etc/hostname\"",
            "/* */ # /* */ include \"/etc/hostname\"",
            "#if __has_include(\"/etc/shadow\")\n#endif",
            "#include <mma.h\" \"/etc/passwd\">",
            "const char* s = R\"x( \" /* )x\";\n#include \"/etc/passwd\"\n// */",
            "auto s = u8R\"(\n)\";\n#include \"/etc/passwd\"",
        ] {
            assert!(refused(bad), "not refused: {bad:?}");
        }
    }

    #[test]
    fn errors_name_the_line() {
        let e = check("#include \"sgemm.cuh\"\n\n// x\n#include \"/x\"\n").unwrap_err();
        assert!(e.starts_with("s.cu(4): "), "{e}");
        let e = check("int a; /* multi\nline */\n#inc\\\nlude \"/x\"\n").unwrap_err();
        assert!(e.starts_with("s.cu(3): "), "{e}");
    }

    #[test]
    fn the_log_keeps_only_the_submissions_own_text() {
        let log = "s.cu(3): error: identifier \"x\" is undefined\n      x = 1;\n      ^\n\n\
                   /proc/self/environ(1): error: unrecognized token\n  SECRET=hunter2\n  ^\n\
                   1 error detected in the compilation of \"s.cu\".\n";
        let shown = filter_log("s.cu", log);
        assert!(shown.contains("s.cu(3): error: identifier \"x\" is undefined") && shown.contains("x = 1;"));
        assert!(!shown.contains("hunter2") && !shown.contains("/proc"), "{shown}");
    }
}
