//! How the grader talks with its children, so that a submission cannot write a verdict.
//!
//! A child reports on its own channel: a pipe the parent creates and hands over as file
//! descriptor 3, never stdout or stderr (where a kernel's `printf` goes). Every message is one
//! line, `TOKEN JSON`, where TOKEN is a random 128-bit value the parent sends as the first line
//! of the child's stdin (not in its arguments or environment, which `/proc` shows). A line
//! without the token fails the run. The child's stdout and stderr are drained while it runs,
//! at most [`OUTPUT_CAP`] bytes of each kept between two reads, never parsed.

use serde_json::Value;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The descriptor a child writes its messages to.
pub const CHANNEL_FD: i32 = 3;

/// How much of a child's stdout and of its stderr is kept between two reads.
pub const OUTPUT_CAP: usize = 64 * 1024;

/// Longest message line accepted (a case's result is a few hundred bytes).
const LINE_CAP: usize = 1 << 20;

/// Environment variables a child keeps; everything else is cleared.
const KEPT_ENV: &[&str] = &[
    "PATH",
    "LD_LIBRARY_PATH",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_VISIBLE_DEVICES",
    "SGEMM_DEVICE",
    "SGEMM_CUDA_INCLUDE",
    "LANG",
];

/// A fresh random token, as 32 hex digits.
pub fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("cannot read /dev/urandom for the grader's token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The first `cap` bytes a reader produces; the rest is read and dropped, so that the writer
/// never blocks on a full pipe.
fn drain(mut from: impl Read + Send + 'static, keep: Arc<Mutex<Vec<u8>>>, cap: usize) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut kept = keep.lock().unwrap_or_else(|p| p.into_inner());
            let room = cap.saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..n.min(room)]);
        }
    })
}

/// What a message line held.
#[derive(Debug, PartialEq)]
pub enum Message {
    Json(Value),
    /// A line that is not `TOKEN JSON`: the channel was written by someone else.
    Forged(String),
}

/// Reads `TOKEN JSON` lines; anything else is [`Message::Forged`].
pub fn parse_line(token: &str, line: &str) -> Message {
    match line.split_once(' ') {
        Some((t, json)) if t == token => match serde_json::from_str(json) {
            Ok(v) => Message::Json(v),
            Err(_) => Message::Forged("a message that is not JSON".into()),
        },
        _ => Message::Forged("a line without the grader's token".into()),
    }
}

/// A child process of the grader, with its channel and drained output.
pub struct ChildProc {
    proc: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Message>,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    drains: Vec<JoinHandle<()>>,
}

/// Why a wait for a message ended without one.
#[derive(Debug)]
pub enum Ended {
    TimedOut,
    /// The child exited (or closed its channel); the exit status and the last line of stderr.
    Exited(String),
    Forged(String),
}

impl ChildProc {
    /// Starts `program args` with a cleared environment (plus `env`), its channel on fd 3,
    /// stdout and stderr drained, in `dir`, and sends it the token.
    pub fn spawn(
        program: &Path,
        args: &[String],
        env: &[(&str, OsString)],
        dir: &Path,
        token: &str,
    ) -> Result<ChildProc, String> {
        let (read_end, write_end) = channel_pipe()?;
        let mut cmd = Command::new(program);
        cmd.args(args).env_clear().current_dir(dir);
        for name in KEPT_ENV {
            if let Some(v) = std::env::var_os(name) {
                cmd.env(name, v);
            }
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
        let raw = write_end.as_raw_fd();
        // SAFETY: between fork and exec only async-signal-safe calls: dup2 onto fd 3 (which
        // clears close-on-exec on the copy).
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(raw, CHANNEL_FD) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut proc = cmd.spawn().map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        drop(write_end);
        let (stdout, stderr) = (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(Vec::new())));
        let drains = vec![
            drain(proc.stdout.take().expect("piped"), stdout.clone(), OUTPUT_CAP),
            drain(proc.stderr.take().expect("piped"), stderr.clone(), OUTPUT_CAP),
        ];
        let (send, messages) = channel();
        let token_owned = token.to_string();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(std::fs::File::from(read_end));
            loop {
                let mut line = Vec::new();
                match (&mut reader).take(LINE_CAP as u64).read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let text = String::from_utf8_lossy(&line);
                let msg = if line.ends_with(b"\n") {
                    parse_line(&token_owned, text.trim_end())
                } else {
                    Message::Forged("an overlong or unterminated message".into())
                };
                let forged = matches!(msg, Message::Forged(_));
                if send.send(msg).is_err() || forged {
                    break;
                }
            }
        });
        let mut child = ChildProc { proc, stdin: None, messages, stdout, stderr, drains };
        let mut stdin = child.proc.stdin.take().expect("piped");
        // A child that is already gone cannot take its token: `receive` then says how it ended.
        if writeln!(stdin, "{token}").is_ok() {
            child.stdin = Some(stdin);
        }
        Ok(child)
    }

    /// Sends one line on the child's stdin.
    pub fn send(&mut self, line: &str) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("the grading process's input is closed")?;
        writeln!(stdin, "{line}").and_then(|_| stdin.flush()).map_err(|e| format!("the grading process is gone: {e}"))
    }

    /// Closes the child's stdin (it then ends when it has read everything).
    pub fn close_input(&mut self) {
        self.stdin = None;
    }

    /// The next message, waiting at most `timeout`.
    pub fn receive(&mut self, timeout: Duration) -> Result<Value, Ended> {
        match self.messages.recv_timeout(timeout) {
            Ok(Message::Json(v)) => Ok(v),
            Ok(Message::Forged(why)) => {
                self.kill();
                Err(Ended::Forged(format!("the result channel was tampered with ({why})")))
            }
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                Err(Ended::TimedOut)
            }
            Err(RecvTimeoutError::Disconnected) => Err(Ended::Exited(self.exit_reason())),
        }
    }

    /// Closes the child's input and waits (at most `timeout`) for it to exit, then kills what is
    /// left and lets the drains read what it wrote last; its exit code, if it exited.
    pub fn finish(&mut self, timeout: Duration) -> Option<i32> {
        self.close_input();
        let code = self.wait(timeout);
        self.kill();
        let deadline = std::time::Instant::now() + Duration::from_secs(1);
        while self.drains.iter().any(|d| !d.is_finished()) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        code
    }

    /// Waits for the child to exit (at most `timeout`, then kills it); its exit code.
    pub fn wait(&mut self, timeout: Duration) -> Option<i32> {
        let start = std::time::Instant::now();
        loop {
            if let Ok(Some(status)) = self.proc.try_wait() {
                return status.code();
            }
            if start.elapsed() > timeout {
                self.kill();
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The exit status and the last non-empty line of stderr, once the child has exited.
    fn exit_reason(&mut self) -> String {
        let status = match self.proc.wait() {
            Ok(s) => s.to_string(),
            Err(e) => e.to_string(),
        };
        // Let the drain threads take what the child wrote last.
        std::thread::sleep(Duration::from_millis(20));
        let err = String::from_utf8_lossy(&self.stderr.lock().unwrap_or_else(|p| p.into_inner())).into_owned();
        let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no message").trim().to_string();
        format!("{status}: {}", last.trim_start_matches("error: "))
    }

    /// Kills the child and everything it started (its process group).
    pub fn kill(&mut self) {
        // SAFETY: signals the child's own process group (it was started as its leader).
        unsafe {
            libc::kill(-(self.proc.id() as i32), libc::SIGKILL);
        }
        let _ = self.proc.kill();
        let _ = self.proc.wait();
    }

    /// What the child printed to stdout (the submission's `printf`) since the last call, as
    /// text: each call takes its part, at most [`OUTPUT_CAP`] bytes.
    pub fn take_output(&self) -> String {
        let taken = std::mem::take(&mut *self.stdout.lock().unwrap_or_else(|p| p.into_inner()));
        String::from_utf8_lossy(&taken).into_owned()
    }
}

impl Drop for ChildProc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The child's side: reads the token from stdin, then writes `TOKEN JSON` lines to fd 3.
pub struct Reporter {
    token: String,
    out: std::fs::File,
}

impl Reporter {
    /// Takes the channel (fd 3) and the token (the first line of stdin).
    pub fn open() -> Result<(Reporter, std::io::StdinLock<'static>), String> {
        let mut stdin = std::io::stdin().lock();
        let mut token = String::new();
        stdin.read_line(&mut token).map_err(|e| format!("no token on stdin: {e}"))?;
        // SAFETY: fd 3 was set up by the parent for this process alone; nothing else owns it.
        let out = unsafe { std::fs::File::from_raw_fd(CHANNEL_FD) };
        Ok((Reporter { token: token.trim().to_string(), out }, stdin))
    }

    /// Sends one message.
    pub fn send(&mut self, v: &Value) -> Result<(), String> {
        writeln!(self.out, "{} {v}", self.token).and_then(|_| self.out.flush()).map_err(|e| e.to_string())
    }

    /// Reports a fault of the grading machine (no GPU, no NVRTC, no confinement), found before
    /// the submission was touched: the parent stops the grading instead of scoring it.
    pub fn machine(&mut self, why: impl std::fmt::Display) -> Result<(), String> {
        self.send(&serde_json::json!({ "machine": why.to_string() }))
    }
}

/// The channel's pipe, both ends close-on-exec, the write end moved above the descriptors a child
/// is given (stdio and the channel). `pipe2` numbers its two ends one after the other, each the
/// lowest number free at that moment, so a write end can be 3 when another thread closes fd 3 in
/// between (the grader's threads start and end children all the time). `dup2` would then "copy"
/// it onto itself, which keeps close-on-exec set, and the child would start without its channel;
/// a number from 0 to 2 would be replaced by the child's stdio before the copy.
fn channel_pipe() -> Result<(OwnedFd, OwnedFd), String> {
    let failed = || format!("cannot create the grader's channel: {}", std::io::Error::last_os_error());
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(failed());
    }
    // SAFETY: both descriptors were just created and are owned here alone.
    let (read_end, write_end) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: F_DUPFD_CLOEXEC creates a new descriptor, owned here alone; the low one is dropped.
    let moved = unsafe { libc::fcntl(write_end.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10) };
    if moved < 0 {
        return Err(failed());
    }
    // SAFETY: `moved` was just created by fcntl.
    Ok((read_end, unsafe { OwnedFd::from_raw_fd(moved) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The write end of the channel never sits where the child's stdio or channel go, even when
    /// the pipe's descriptors are the lowest there are.
    #[test]
    fn the_channel_is_moved_above_the_childs_descriptors() {
        let (_read, moved) = channel_pipe().unwrap();
        assert!(moved.as_raw_fd() >= 10, "above stdio, the channel and what a shell may use");
        // SAFETY: reads the flags of a descriptor owned here.
        let flags = unsafe { libc::fcntl(moved.as_raw_fd(), libc::F_GETFD) };
        assert!(flags & libc::FD_CLOEXEC != 0, "the parent's copy stays close-on-exec");
    }

    #[test]
    fn lines_need_the_token_and_json() {
        let t = "0123456789abcdef0123456789abcdef";
        assert_eq!(
            parse_line(t, &format!("{t} {{\"passed\":true}}")),
            Message::Json(serde_json::json!({"passed": true}))
        );
        assert!(matches!(parse_line(t, "{\"passed\":true}"), Message::Forged(_)));
        assert!(matches!(parse_line(t, &format!("{} {{\"passed\":true}}", &t[1..])), Message::Forged(_)));
        assert!(matches!(parse_line(t, &format!("{t} passed")), Message::Forged(_)));
        assert!(matches!(parse_line(t, ""), Message::Forged(_)));
    }

    #[test]
    fn tokens_are_fresh() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }

    /// A child that floods stdout, writes a forged verdict to stdout and a real one to its
    /// channel: the parent gets the real one, never blocks, and keeps 64 KiB of the output.
    #[test]
    fn a_child_cannot_forge_or_block() {
        let token = new_token().unwrap();
        let script = "read t; head -c 300000 /dev/zero | tr '\\0' x; echo \"$t {\\\"passed\\\":true}\"; \
                      echo \"$t {\\\"passed\\\":false}\" >&3; sleep 0.2";
        let dir = std::env::temp_dir();
        let mut c = ChildProc::spawn(Path::new("/bin/sh"), &["-c".into(), script.into()], &[], &dir, &token).unwrap();
        let v = c.receive(Duration::from_secs(10)).unwrap();
        assert_eq!(v["passed"], false);
        c.finish(Duration::from_secs(10));
        assert_eq!(c.take_output().len(), OUTPUT_CAP);
        assert!(c.take_output().is_empty(), "a second read takes nothing twice");
        // A forged line on the channel ends the child with a reason.
        let mut c = ChildProc::spawn(
            Path::new("/bin/sh"),
            &["-c".into(), "echo forged >&3; sleep 5".into()],
            &[],
            &dir,
            &token,
        )
        .unwrap();
        assert!(matches!(c.receive(Duration::from_secs(10)), Err(Ended::Forged(_))));
        // Silence is a time-out; an exit is an exit.
        let mut c =
            ChildProc::spawn(Path::new("/bin/sh"), &["-c".into(), "sleep 5".into()], &[], &dir, &token).unwrap();
        assert!(matches!(c.receive(Duration::from_millis(200)), Err(Ended::TimedOut)));
        let mut c =
            ChildProc::spawn(Path::new("/bin/sh"), &["-c".into(), "echo gone >&2; exit 3".into()], &[], &dir, &token)
                .unwrap();
        match c.receive(Duration::from_secs(10)) {
            Err(Ended::Exited(why)) => assert!(why.contains('3') && why.contains("gone"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn overlong_lines_are_refused() {
        let token = new_token().unwrap();
        let script = "read t; { printf \"$t \"; head -c 2000000 /dev/zero | tr '\\0' 1; echo; } >&3";
        let mut c =
            ChildProc::spawn(Path::new("/bin/sh"), &["-c".into(), script.into()], &[], &std::env::temp_dir(), &token)
                .unwrap();
        assert!(matches!(c.receive(Duration::from_secs(10)), Err(Ended::Forged(_))));
    }
}
