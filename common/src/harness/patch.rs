//! Experiments as small diffs: an experiment kernel is a unified diff (`diff -u`) against its
//! step's kernel, applied to today's kernel when it is built. A diff that no longer applies (the
//! kernel changed under it) is an error naming the hunk, so an experiment never drifts away from
//! the kernel it varies. Pure `std`: the `steps` crate's build script includes this file too.

/// Applies the unified diff `patch` to `base`; every hunk's context and removed lines must match
/// exactly where the hunk says.
pub fn apply(base: &str, patch: &str) -> Result<String, String> {
    let lines: Vec<&str> = base.split_inclusive('\n').collect();
    let mut out = String::with_capacity(base.len() + patch.len());
    let mut next = 0usize; // the first base line not yet copied (0-based)
    let mut body = patch.lines().skip_while(|l| !l.starts_with("@@")).peekable();
    let mut hunks = 0;
    while let Some(header) = body.next() {
        hunks += 1;
        let start = header
            .strip_prefix("@@ -")
            .and_then(|h| h.split([',', ' ']).next())
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or_else(|| format!("hunk {hunks}: bad header {header:?}"))?;
        // `-0,0` adds to an empty file; otherwise line numbers count from 1.
        let at = start.saturating_sub(1);
        if at < next || at > lines.len() {
            return Err(format!("hunk {hunks} ({header}) starts outside the kernel or before the previous hunk"));
        }
        out.extend(lines[next..at].iter().copied());
        next = at;
        while let Some(l) = body.peek() {
            if l.starts_with("@@") {
                break;
            }
            let l = body.next().unwrap_or_default();
            if l.starts_with("\\ No newline") {
                if out.ends_with('\n') {
                    out.pop();
                }
                continue;
            }
            let (kind, text) = l.split_at(l.len().min(1));
            match kind {
                "+" => {
                    out.push_str(text);
                    out.push('\n');
                }
                " " | "-" | "" => {
                    let want = lines.get(next).map(|s| s.trim_end_matches('\n'));
                    if want != Some(text) {
                        return Err(format!(
                            "hunk {hunks} ({header}) no longer applies at line {}: the kernel has {:?}, the diff expects {text:?}",
                            next + 1,
                            want.unwrap_or("(end of file)")
                        ));
                    }
                    if kind != "-" {
                        out.push_str(lines[next]);
                    }
                    next += 1;
                }
                _ => return Err(format!("hunk {hunks}: a line that is not context, + or -: {l:?}")),
            }
        }
    }
    if hunks == 0 {
        return Err("no hunk: not a unified diff".into());
    }
    out.extend(lines[next..].iter().copied());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "a\nb\nc\nd\ne\nf\ng\n";

    #[test]
    fn applies_and_refuses() {
        let patch = "--- k.cu\n+++ x.cu\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n@@ -6,2 +6,3 @@\n f\n g\n+h\n";
        assert_eq!(apply(BASE, patch).unwrap(), "a\nb\nC\nd\ne\nf\ng\nh\n");
        let stale = "@@ -2,3 +2,3 @@\n b\n-x\n+C\n d\n";
        let e = apply(BASE, stale).unwrap_err();
        assert!(e.contains("no longer applies at line 3") && e.contains("\"x\""), "{e}");
        assert!(apply(BASE, "just text").is_err());
    }
}
