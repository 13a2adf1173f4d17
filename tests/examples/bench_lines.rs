//! Writes the inputs of the whole-process `perago validate --lines` benchmark (BENCHMARKS.md)
//! into a directory: each corpus of `perago_tests::corpus` repeated to COPIES × 1000 lines
//! (`<corpus>.jsonl`), and the contract schemas closed as perago reads them (`schemas/`), for
//! the jsonschema peer (`jsonschema_lines`), which has no closed-object policy of its own.
//!
//! `cargo run --release -p perago-tests --example bench_lines -- DIR [COPIES]` (default 200).

use std::io::{BufWriter, Write};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("usage: bench_lines DIR [COPIES]"));
    let copies: usize = args
        .next()
        .map_or(200, |c| c.parse().expect("a number of copies"));
    std::fs::create_dir_all(dir.join("schemas")).expect("the directory can be made");
    let set = perago_tests::corpus::contract_schemas();
    for f in &set.files {
        let text = serde_json::to_string_pretty(&f.normalised).expect("serialisable");
        std::fs::write(dir.join("schemas").join(&f.file), text).expect("writable");
    }
    for corpus in perago_tests::corpus::all() {
        let path = dir.join(format!("{}.jsonl", corpus.name));
        let mut out = BufWriter::new(std::fs::File::create(&path).expect("writable"));
        for _ in 0..copies {
            for doc in &corpus.docs {
                // One document per line: a truncated document has no newline inside it.
                out.write_all(doc).expect("writable");
                out.write_all(b"\n").expect("writable");
            }
        }
        out.flush().expect("writable");
        eprintln!("{}: {} lines", path.display(), copies * corpus.docs.len());
    }
}
