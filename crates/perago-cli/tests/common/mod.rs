//! Running the built `perago` binary, shared by the CLI test files.
#![allow(dead_code)] // each test file uses its own subset

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `perago args...` in `dir` with `stdin` as standard input.
pub fn perago_in(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_perago"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("perago runs");
    let mut pipe = child.stdin.take().expect("stdin is piped");
    let input = stdin.to_vec();
    // Written from another thread so a large input cannot deadlock against a full stdout.
    let writer = std::thread::spawn(move || {
        // perago may exit before reading everything (e.g. on a usage error).
        let _ = pipe.write_all(&input);
    });
    let output = child.wait_with_output().expect("perago finishes");
    writer.join().expect("the writer thread finishes");
    output
}

/// The exit code.
pub fn code(output: &Output) -> i32 {
    output.status.code().expect("perago exits normally")
}

/// Standard output as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// Standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}
