//! Writes the user-schema corpora (`perago_tests::user_corpus`) to a directory, for benchmarks
//! that run whole processes over files:
//!
//! ```sh
//! cargo run --release -p perago-tests --bin user-corpus -- --out target/user-corpus [--seed N]
//! ```
//!
//! Writes `<corpus>.jsonl` (one document a line), `<corpus>.labels` (one line per document:
//! `valid`, or the mutation that broke it) and `schemas/` (the schema files).

use perago_tests::user_corpus;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: user-corpus --out DIR [--seed N]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("user-corpus: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let mut out = None;
    let mut seed = user_corpus::DEFAULT_SEED;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--out" => out = Some(PathBuf::from(args.next().ok_or(USAGE)?)),
            "--seed" => {
                let text = args.next().ok_or(USAGE)?;
                seed = text
                    .parse()
                    .map_err(|_| format!("--seed: expected a whole number, got {text:?}"))?;
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unexpected argument {other:?}; {USAGE}")),
        }
    }
    let out = out.ok_or(USAGE)?;
    let schemas = out.join("schemas");
    std::fs::create_dir_all(&schemas).map_err(|e| format!("{}: {e}", schemas.display()))?;
    for (file, text) in user_corpus::SCHEMAS {
        let path = schemas.join(file);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    for corpus in user_corpus::all(seed) {
        let mut docs = Vec::with_capacity(corpus.total_bytes() as usize + corpus.docs.len());
        let mut labels = String::new();
        for (doc, mutation) in corpus.docs.iter().zip(&corpus.mutations) {
            docs.extend_from_slice(doc);
            docs.push(b'\n');
            match mutation {
                None => labels.push_str("valid\n"),
                Some(m) => labels.push_str(&format!("{m:?}\n")),
            }
        }
        for (ext, bytes) in [("jsonl", &docs[..]), ("labels", labels.as_bytes())] {
            let path = out.join(format!("{}.{ext}", corpus.name));
            std::fs::File::create(&path)
                .and_then(|mut f| f.write_all(bytes))
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        println!(
            "{}: {} documents ({} invalid), {} bytes, against {}",
            corpus.name,
            corpus.docs.len(),
            corpus.invalid_count(),
            corpus.total_bytes(),
            corpus.schema
        );
    }
    Ok(())
}
