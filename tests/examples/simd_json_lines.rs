//! The floor of the whole-process `perago validate --lines` benchmark (BENCHMARKS.md): each
//! line of standard input parsed by `simd-json` (SIMD, the instruction set chosen at run time)
//! into its tape, with buffers reused from one line to the next, and nothing else: no schema,
//! no output but a count at the end. What perago does beyond this is validation and reporting.
//!
//! `cargo build --release -p perago-tests --example simd_json_lines`, then
//! `simd_json_lines < docs.jsonl`.

use std::io::{BufRead, BufReader, Write};

fn main() {
    let mut input = BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut buffers = simd_json::Buffers::new(64 * 1024);
    let mut line = Vec::new();
    let (mut documents, mut malformed) = (0u64, 0u64);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).expect("readable input") == 0 {
            break;
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        documents += 1;
        if simd_json::to_tape_with_buffers(&mut line, &mut buffers).is_err() {
            malformed += 1;
        }
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "{documents} documents, {malformed} malformed").expect("stdout");
}
