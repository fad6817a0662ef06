//! A submission as the grader takes it: read once, as a regular file, without following links,
//! into bytes that go to NVRTC as they are (any byte but NUL), then copied alone into a fresh
//! private folder. What is not a small, non-empty regular file is refused with one line that
//! names the entry; that refusal is the student's card, not an error of the grading.

use crate::protocol::new_token;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The largest submission accepted (a kernel of the ladder is a few kilobytes).
pub const MAX_SOURCE: u64 = 1 << 20;

/// Why a submission was not read.
#[derive(Debug, PartialEq)]
pub enum Unread {
    /// The submission's own doing: its card says why, in one line.
    Refused(String),
    /// The staff's (a file that is not there): an error of the grading, no card.
    Missing(String),
}

/// A name as text for a card, a CSV or a page: bytes that are not UTF-8 shown as U+FFFD, control
/// characters (a newline in a file name) as their escapes.
pub fn printable(name: &std::ffi::OsStr) -> String {
    let lossy = name.to_string_lossy();
    lossy.chars().flat_map(|c| if c.is_control() { c.escape_default().collect() } else { vec![c] }).collect()
}

/// The entry's name as a card shows it: the file name alone (not the staff's folders).
pub fn shown_name(path: &Path) -> String {
    printable(path.file_name().unwrap_or(path.as_os_str()))
}

/// What a file of this type is, for a refusal.
fn kind(t: std::fs::FileType) -> &'static str {
    match () {
        _ if t.is_symlink() => "a symbolic link",
        _ if t.is_dir() => "a directory",
        _ if t.is_fifo() => "a FIFO (a named pipe)",
        _ if t.is_socket() => "a socket",
        _ if t.is_char_device() || t.is_block_device() => "a device",
        _ => "not a regular file",
    }
}

/// Reads the submission at `path` once: its type from `lstat` (a link, a directory, a FIFO or a
/// device is refused without being opened), then one open that follows no link and cannot block,
/// checked to be the same regular file, and at most [`MAX_SOURCE`] bytes read.
pub fn read_submission(path: &Path) -> Result<Vec<u8>, Unread> {
    let name = shown_name(path);
    let refused = |why: String| Unread::Refused(format!("refused: {why}"));
    let meta = std::fs::symlink_metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Unread::Missing(format!("the submission {} does not exist", path.display())),
        _ => Unread::Missing(format!("cannot read the submission {}: {e}", path.display())),
    })?;
    if !meta.file_type().is_file() {
        return Err(refused(format!(
            "{name} is {}, not a regular file: submit the kernel's .cu file itself",
            kind(meta.file_type())
        )));
    }
    let too_large = |bytes: u64| refused(format!("{name} is {bytes} bytes; the limit is {MAX_SOURCE}"));
    if meta.len() > MAX_SOURCE {
        return Err(too_large(meta.len()));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| refused(format!("{name} cannot be opened as a regular file ({e})")))?;
    let opened = file.metadata().map_err(|e| refused(format!("{name}: {e}")))?;
    if !opened.file_type().is_file() || (opened.dev(), opened.ino()) != (meta.dev(), meta.ino()) {
        return Err(refused(format!("{name} changed while it was read")));
    }
    let mut bytes = Vec::new();
    file.take(MAX_SOURCE + 1).read_to_end(&mut bytes).map_err(|e| refused(format!("{name}: {e}")))?;
    if bytes.len() as u64 > MAX_SOURCE {
        return Err(too_large(bytes.len() as u64));
    }
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(refused(format!(
            "{name} holds a NUL byte (byte {at}): a kernel is text, and NVRTC reads up to the first NUL"
        )));
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(refused(format!("{name} is empty")));
    }
    Ok(bytes)
}

/// The submission copied alone into a fresh private folder, removed when dropped.
pub struct Scratch {
    pub dir: PathBuf,
    /// Its file name there: the student's, when it is a plain file name, else `submission.cu`.
    pub file: String,
}

impl Scratch {
    pub fn new(bytes: &[u8], original: &Path) -> Result<Scratch, String> {
        let dir = std::env::temp_dir().join(format!("grader-{}-{}", std::process::id(), &new_token()?[..12]));
        std::fs::create_dir(&dir).map_err(|e| format!("cannot make a scratch folder: {e}"))?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).map_err(|e| e.to_string())?;
        let scratch = Scratch { dir, file: scratch_name(original) };
        std::fs::write(scratch.dir.join(&scratch.file), bytes).map_err(|e| e.to_string())?;
        std::fs::create_dir(scratch.dir.join("cubins")).map_err(|e| e.to_string())?;
        Ok(scratch)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The name compile errors show: the student's own if it is a plain file name (a letter or digit
/// first, then letters, digits, `.`, `_` and `-`), else `submission.cu`.
fn scratch_name(original: &Path) -> String {
    let name = original.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let plain = name.ends_with(".cu")
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if plain { name.to_string() } else { "submission.cu".to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("submission-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn refusal(path: &Path) -> String {
        match read_submission(path) {
            Err(Unread::Refused(why)) => why,
            other => panic!("{}: {other:?}", path.display()),
        }
    }

    /// Links, directories, FIFOs and devices are refused by name, never opened or followed: a
    /// FIFO would block, a link would show its target's text.
    #[test]
    fn only_regular_files_are_read() {
        let d = dir("types");
        std::fs::write(d.join("hidden.txt"), "SECRET 257 129 65").unwrap();
        std::os::unix::fs::symlink(d.join("hidden.txt"), d.join("link.cu")).unwrap();
        let why = refusal(&d.join("link.cu"));
        assert!(why.contains("link.cu is a symbolic link") && !why.contains("SECRET"), "{why}");
        std::fs::create_dir(d.join("dir.cu")).unwrap();
        assert!(refusal(&d.join("dir.cu")).contains("dir.cu is a directory"));
        let fifo = std::ffi::CString::new(d.join("fifo.cu").as_os_str().as_bytes()).unwrap();
        // SAFETY: makes a FIFO at a path of this test's own folder.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert!(refusal(&d.join("fifo.cu")).contains("fifo.cu is a FIFO"));
        assert!(refusal(Path::new("/dev/null")).contains("null is a device"));
        assert!(matches!(read_submission(&d.join("nothing.cu")), Err(Unread::Missing(_))));
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Any byte but NUL goes to NVRTC as it is; empty, NUL and oversize files are refused.
    #[test]
    fn bytes_are_kept_and_bad_files_refused() {
        let d = dir("bytes");
        let latin1 = b"// caf\xe9\nextern \"C\" __global__ void sgemm() {}\n".to_vec();
        std::fs::write(d.join("latin1.cu"), &latin1).unwrap();
        assert_eq!(read_submission(&d.join("latin1.cu")).unwrap(), latin1);
        std::fs::write(d.join("nul.cu"), b"int a;\0int b;").unwrap();
        assert!(refusal(&d.join("nul.cu")).contains("NUL byte (byte 6)"));
        std::fs::write(d.join("empty.cu"), " \n\t").unwrap();
        assert!(refusal(&d.join("empty.cu")).contains("empty.cu is empty"));
        std::fs::write(d.join("big.cu"), vec![b'/'; MAX_SOURCE as usize + 1]).unwrap();
        assert!(refusal(&d.join("big.cu")).contains("is 1048577 bytes; the limit is 1048576"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn names_are_text_and_scratch_names_never_options() {
        assert_eq!(printable(OsStr::from_bytes(b"caf\xe9\nx.cu")), "caf\u{fffd}\\nx.cu");
        assert_eq!(scratch_name(Path::new("/x/mine.cu")), "mine.cu");
        for odd in ["--help.cu", "-rf.cu", "my kernel.cu", "$(id).cu", ".hidden.cu", "k.txt"] {
            assert_eq!(scratch_name(Path::new(odd)), "submission.cu", "{odd}");
        }
        assert_eq!(scratch_name(Path::new(OsStr::from_bytes(b"caf\xe9.cu"))), "submission.cu");
    }
}
