//! Running the built binaries in end-to-end tests, as users run them: a child process whose
//! output is collected as it comes, waited on with a time limit (never a sleep), signalled,
//! and held to a memory limit.
//!
//! ```no_run
//! use perago_testserver::process::Child;
//! use std::process::Command;
//! use std::time::Duration;
//!
//! let mut cmd = Command::new("perago");
//! cmd.args(["validate", "--schema", "worker-completion.v1", "/dev/zero"]);
//! let done = Child::start(cmd, Some(1 << 30)).wait(Duration::from_secs(60));
//! assert_eq!(done.code(), Some(2), "{}", done.stderr);
//! ```
//!
//! A binary of another package of the workspace, which `CARGO_BIN_EXE_<name>` does not name, is
//! found with [`built_binary`].
//!
//! The memory limit is the address-space limit (`ulimit -v`): a program that tries to grow
//! past it fails to allocate and aborts, which a test sees as a crash. Virtual memory runs
//! ahead of what is resident (each thread reserves its stack, the allocator its arenas), so
//! limits are generous; [`Child::peak_rss_kib`] reads what was really used.

use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What a stream has written so far, and whether it is closed.
#[derive(Debug, Default)]
struct Stream {
    state: Mutex<(Vec<u8>, bool)>,
    changed: Condvar,
}

impl Stream {
    /// Collects `from` on a thread of its own, until it closes.
    fn collect(from: impl Read + Send + 'static) -> Arc<Stream> {
        let stream = Arc::new(Stream::default());
        let sink = Arc::clone(&stream);
        std::thread::spawn(move || {
            let mut from = from;
            let mut buf = [0u8; 64 * 1024];
            loop {
                let n = from.read(&mut buf).unwrap_or(0);
                let mut st = sink.state.lock().unwrap();
                if n == 0 {
                    st.1 = true;
                } else {
                    st.0.extend_from_slice(&buf[..n]);
                }
                sink.changed.notify_all();
                if n == 0 {
                    return;
                }
            }
        });
        stream
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.state.lock().unwrap().0).into_owned()
    }

    /// Waits until `pred` holds for the text so far; false when the stream closed or
    /// `timeout` passed first.
    fn wait_for(&self, timeout: Duration, pred: impl Fn(&str) -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        let mut st = self.state.lock().unwrap();
        loop {
            if pred(&String::from_utf8_lossy(&st.0)) {
                return true;
            }
            let now = Instant::now();
            if st.1 || now >= deadline {
                return false;
            }
            st = self.changed.wait_timeout(st, deadline - now).unwrap().0;
        }
    }
}

/// A running child process.
#[derive(Debug)]
pub struct Child {
    pid: u32,
    stdin: Option<ChildStdin>,
    stdout: Arc<Stream>,
    stderr: Arc<Stream>,
    exited: Receiver<ExitStatus>,
    /// Whether its exit was seen (its pid may then be another process's).
    reaped: bool,
}

/// A finished child: how it ended and everything it wrote.
#[derive(Debug)]
pub struct Finished {
    /// The exit status.
    pub status: ExitStatus,
    /// Standard output, lossily decoded.
    pub stdout: String,
    /// Standard error, lossily decoded.
    pub stderr: String,
}

impl Finished {
    /// The exit code; `None` when a signal ended the process.
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }
}

/// An output collected some other way ([`Command::output`]), lossily decoded.
impl From<Output> for Finished {
    fn from(output: Output) -> Finished {
        Finished {
            status: output.status,
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// The status and both streams, for a failed assertion's message.
impl std::fmt::Display for Finished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status {:?}\nstdout:\n{}\nstderr:\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

impl Child {
    /// Starts `cmd` with piped standard streams, under an address-space limit of
    /// `memory_limit` bytes when given.
    pub fn start(cmd: Command, memory_limit: Option<u64>) -> Child {
        let mut cmd = match memory_limit {
            None => cmd,
            Some(bytes) => {
                // `exec` keeps the shell's pid, so signals reach the program itself.
                let mut limited = Command::new("sh");
                limited
                    .arg("-c")
                    .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", bytes / 1024))
                    .arg(cmd.get_program())
                    .args(cmd.get_args());
                for (key, value) in cmd.get_envs() {
                    match value {
                        Some(value) => limited.env(key, value),
                        None => limited.env_remove(key),
                    };
                }
                if let Some(dir) = cmd.get_current_dir() {
                    limited.current_dir(dir);
                }
                limited
            }
        };
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {:?}: {e}", cmd.get_program()));
        let pid = child.id();
        let stdin = child.stdin.take();
        let stdout = Stream::collect(child.stdout.take().expect("piped"));
        let stderr = Stream::collect(child.stderr.take().expect("piped"));
        let (tx, exited) = mpsc::channel();
        std::thread::spawn(move || {
            if let Ok(status) = child.wait() {
                let _ = tx.send(status);
            }
        });
        Child {
            pid,
            stdin,
            stdout,
            stderr,
            exited,
            reaped: false,
        }
    }

    /// Starts `cmd` as [`start`](Self::start) does, writes `stdin` to it and
    /// [`wait`](Self::wait)s for it. The program may stop reading early (a document over a
    /// limit, a usage error): the rest of `stdin` is then dropped.
    pub fn run(
        cmd: Command,
        memory_limit: Option<u64>,
        stdin: &[u8],
        timeout: Duration,
    ) -> Finished {
        let mut child = Child::start(cmd, memory_limit);
        child.write_stdin(stdin);
        child.wait(timeout)
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Writes `bytes` to standard input; false when the child no longer reads it.
    pub fn write_stdin(&mut self, bytes: &[u8]) -> bool {
        match self.stdin.as_mut() {
            Some(stdin) => stdin.write_all(bytes).and_then(|()| stdin.flush()).is_ok(),
            None => false,
        }
    }

    /// Closes standard input: the child reads its end.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Standard output so far.
    pub fn stdout(&self) -> String {
        self.stdout.text()
    }

    /// Standard error so far.
    pub fn stderr(&self) -> String {
        self.stderr.text()
    }

    /// Waits until `pred` holds for standard output so far; false when it closed or
    /// `timeout` passed first.
    pub fn wait_stdout(&self, timeout: Duration, pred: impl Fn(&str) -> bool) -> bool {
        self.stdout.wait_for(timeout, pred)
    }

    /// [`wait_stdout`](Self::wait_stdout) for standard error.
    pub fn wait_stderr(&self, timeout: Duration, pred: impl Fn(&str) -> bool) -> bool {
        self.stderr.wait_for(timeout, pred)
    }

    /// Sends a signal by name (`TERM`, `INT`, `KILL`).
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args(["-s", name, &self.pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -s {name} {} failed", self.pid);
    }

    /// Sends `TERM` and [`wait`](Self::wait)s: the graceful stop a service manager asks for.
    pub fn stop(self, timeout: Duration) -> Finished {
        self.signal("TERM");
        self.wait(timeout)
    }

    /// The most resident memory the process has used so far (`VmHWM`), in KiB; `None` once it
    /// has exited, or off Linux.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// Waits for the process to exit, with standard input closed. Past `timeout` it is killed
    /// and the test fails, showing what it wrote.
    pub fn wait(mut self, timeout: Duration) -> Finished {
        self.close_stdin();
        let exited = self.exited.recv_timeout(timeout);
        self.reaped = exited.is_ok();
        match exited {
            Ok(status) => {
                // Its streams close when it exits: collect the rest.
                self.stdout.wait_for(timeout, |_| false);
                self.stderr.wait_for(timeout, |_| false);
                Finished {
                    status,
                    stdout: self.stdout.text(),
                    stderr: self.stderr.text(),
                }
            }
            Err(_) => {
                let _ = Command::new("kill")
                    .args(["-s", "KILL", &self.pid.to_string()])
                    .status();
                panic!(
                    "process {} did not exit within {timeout:?}\nstdout:\n{}\nstderr:\n{}",
                    self.pid,
                    self.stdout.text(),
                    self.stderr.text()
                );
            }
        }
    }
}

/// The binary `name` as cargo built it beside the running test program:
/// `<target>/<profile>/<name>`, the test being `<target>/<profile>/deps/<test>-<hash>`. For the
/// tests of one package that run another package's binary, which `CARGO_BIN_EXE_<name>` does
/// not name. Cargo builds a package's binaries only for that package's own integration tests,
/// so test both packages in one run (`cargo test --workspace`, or `-p` each): otherwise the
/// binary found is whatever was built last.
///
/// # Panics
/// When there is no such binary; the message says how to build it.
pub fn built_binary(name: &str) -> PathBuf {
    let test = std::env::current_exe().expect("the running test program");
    let binary = test
        .parent()
        .and_then(Path::parent)
        .expect("a test program in <target>/<profile>/deps")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        binary.is_file(),
        "no built `{name}` at {}: build it with this test's profile (`cargo build --bin {name}`), \
         or test its package in the same run (`cargo test --workspace`)",
        binary.display()
    );
    binary
}

/// Every line of `text` (a JSON Lines log) as JSON; panics naming a line that is not.
pub fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| {
                panic!("not a JSON line ({e}): {line:.300}\nall:\n{text:.3000}")
            })
        })
        .collect()
}

/// The records of `lines` whose `event` is `event`, in order.
pub fn events<'a>(lines: &'a [Value], event: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["event"] == event).collect()
}

impl Drop for Child {
    /// A child left running by a failed test is killed.
    fn drop(&mut self) {
        if !self.reaped && self.exited.try_recv().is_err() {
            let _ = Command::new("kill")
                .args(["-s", "KILL", &self.pid.to_string()])
                .stderr(Stdio::null())
                .status();
        }
    }
}
