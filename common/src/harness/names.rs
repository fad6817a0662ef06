//! File-name-safe ids made from names that people and devices give themselves.

/// `name` in lowercase, every run of characters other than ASCII letters, digits and `keep`
/// turned into one `-`, with no `-` at either end.
pub fn slug(name: &str, keep: &[char]) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || keep.contains(&c) {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}
