//! The `perago` binary fed hostile input, as users would feed it: every subcommand that reads
//! a document gets malformed text, deep nesting, a million keys, a repeated key, a byte order
//! mark and an endless stream. Each must answer with its documented exit status and a clear
//! message, in bounded time (generous waits, never sleeps) and bounded memory (an
//! address-space limit, and the child's peak resident size where it matters).

use perago_testserver::process::{Child, Finished};
use serde_json::{Value, json};
use std::process::{Command, Stdio};
use std::time::Duration;

const PATIENCE: Duration = Duration::from_secs(120);
const ADDRESS_SPACE: u64 = 2 << 30;

fn perago(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perago"));
    cmd.args(args).env_remove("PERAGO_MAX_DOCUMENT_BYTES");
    cmd
}

/// Runs `perago args` with `stdin`.
fn run(args: &[&str], stdin: &[u8]) -> Finished {
    Child::run(perago(args), Some(ADDRESS_SPACE), stdin, PATIENCE)
}

/// Hostile documents: (name, bytes, what perago reports at `$` or at the key).
fn hostile() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let many: serde_json::Map<String, Value> = (0..1_000_000)
        .map(|i| (format!("k{i}"), Value::from(i)))
        .collect();
    vec![
        (
            "invalid UTF-8",
            b"{\"summary\": \"\xff\"}".to_vec(),
            "$: malformed JSON: invalid unicode code point",
        ),
        (
            "NaN",
            b"{\"summary\": NaN}".to_vec(),
            "$: malformed JSON: expected value",
        ),
        (
            "100k nesting",
            "[".repeat(100_000).into_bytes(),
            "$: malformed JSON: recursion limit exceeded",
        ),
        (
            "a BOM",
            "\u{feff}{\"summary\": \"s\"}".as_bytes().to_vec(),
            "$: malformed JSON: the document starts with a byte order mark (U+FEFF)",
        ),
        (
            "a repeated key",
            br#"{"summary": "", "summary": "s"}"#.to_vec(),
            "$.summary: duplicate field",
        ),
        (
            "a million keys",
            json!(many).to_string().into_bytes(),
            "$.k0: unknown field",
        ),
    ]
}

#[test]
fn validate_reports_each_hostile_document_as_a_violation() {
    for (name, bytes, said) in hostile() {
        let done = run(&["validate", "--schema", "worker-completion.v1"], &bytes);
        assert_eq!(done.code(), Some(1), "{name}: {:.2000}", done.stderr);
        let first = done.stdout.lines().next().unwrap_or_default();
        assert!(
            first.starts_with(&format!("<stdin>:1: {said}")),
            "{name}: {first:.300}"
        );
    }
}

#[test]
fn completion_check_reports_each_hostile_payload_as_a_violation() {
    for (name, bytes, said) in hostile() {
        let done = run(&["completion", "check", "--payload"], &bytes);
        assert_eq!(done.code(), Some(1), "{name}: {:.2000}", done.stderr);
        assert!(
            done.stdout
                .lines()
                .nth(1)
                .unwrap_or_default()
                .starts_with(said),
            "{name}: {:.300}",
            done.stdout
        );
    }
}

#[test]
fn every_command_reads_at_most_the_document_limit() {
    for args in [
        &["validate", "--schema", "worker-completion.v1", "/dev/zero"][..],
        &["completion", "check", "/dev/zero"],
        &["completion", "check", "--payload", "/dev/zero"],
        &["completion", "followups", "--parent", "T", "/dev/zero"],
    ] {
        let done = Child::start(perago(args), Some(ADDRESS_SPACE)).wait(PATIENCE);
        assert_eq!(done.code(), Some(2), "{args:?}: {}", done.stderr);
        assert!(
            done.stderr.contains(
                "/dev/zero: the document is larger than the limit of 64 MiB (raise it with \
                 --max-document-bytes or PERAGO_MAX_DOCUMENT_BYTES)"
            ),
            "{args:?}: {}",
            done.stderr
        );
    }
    let done = run(
        &[
            "--max-document-bytes",
            "8",
            "completion",
            "check",
            "--payload",
        ],
        br#"{"summary": "s"}"#,
    );
    assert_eq!(done.code(), Some(2));
    assert!(done.stderr.contains("limit of 8 bytes"), "{}", done.stderr);
    let done = run(&["--max-document-bytes", "lots", "schemas"], b"");
    assert_eq!(done.code(), Some(2));
    assert_eq!(
        done.stderr,
        "perago: --max-document-bytes: expected a size such as 64MiB, 10MB or 1000000, got \"lots\"\n"
    );
}

/// JSON Lines stream: each result is written before the next line is read, a line over the
/// limit is skipped without being held, and memory stays flat.
#[test]
fn validate_lines_streams_in_constant_memory() {
    let mut child = Child::start(
        perago(&[
            "validate",
            "--schema",
            "worker-completion.v1",
            "--lines",
            "--format",
            "json",
        ]),
        Some(ADDRESS_SPACE),
    );
    let valid = b"{\"summary\": \"s\"}\n";
    for n in 1..=3 {
        assert!(child.write_stdin(valid));
        assert!(
            child.wait_stdout(PATIENCE, |out| out.lines().count() == n),
            "result {n} before line {} is written: {}",
            n + 1,
            child.stdout()
        );
    }
    // 100 MiB on one line, over the 64 MiB limit: skipped, never held.
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..100 {
        assert!(child.write_stdin(&chunk));
    }
    assert!(child.write_stdin(b"\n"));
    for _ in 0..10_000 {
        assert!(child.write_stdin(valid));
    }
    assert!(
        child.wait_stdout(PATIENCE, |out| out.lines().count() == 3 + 10_000),
        "{}",
        child.stderr()
    );
    let peak = child.peak_rss_kib().expect("perago is running");
    let done = child.wait(PATIENCE);
    assert_eq!(done.code(), Some(2), "{}", done.stderr);
    assert_eq!(
        done.stderr,
        "perago: <stdin>:4: the document is larger than the limit of 64 MiB (raise it with \
         --max-document-bytes or PERAGO_MAX_DOCUMENT_BYTES)\n"
    );
    assert!(peak < 80 * 1024, "peak resident memory {peak} KiB");
}

/// A user schema in draft 2020-12 beyond the contract subset (`allOf`, `if`/`then`, `format`,
/// `uniqueItems`), fed one line at a time by a child process: each result comes back before
/// the next line is written, and memory stays under 20 MiB over 20,000 lines.
#[test]
fn validate_lines_streams_a_2020_12_schema_line_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("event.schema.json");
    std::fs::write(
        &schema,
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "allOf": [{"$ref": "#/$defs/base"}],
            "properties": {"status": {"enum": ["OK", "FAILED"]}, "reason": {"type": "string"},
                           "tags": {"type": "array", "uniqueItems": true}},
            "if": {"properties": {"status": {"const": "FAILED"}}, "required": ["status"]},
            "then": {"required": ["reason"]},
            "$defs": {"base": {"properties": {"at": {"type": "string", "format": "date-time"}},
                               "required": ["at"]}}
        })
        .to_string(),
    )
    .unwrap();
    let mut child = Child::start(
        perago(&[
            "validate",
            "--schema",
            schema.to_str().unwrap(),
            "--lines",
            "--format",
            "json",
        ]),
        Some(ADDRESS_SPACE),
    );
    let lines: [(&[u8], &str); 4] = [
        (
            b"{\"at\": \"2026-12-01T21:30:00Z\", \"status\": \"OK\"}\n",
            "[]",
        ),
        (
            b"{\"at\": \"2026-12-01T21:30:00Z\", \"status\": \"FAILED\"}\n",
            "\"$.reason\"",
        ),
        (b"{\"at\": \"yesterday\", \"extra\": 1}\n", "\"$.extra\""),
        (
            b"{\"at\": \"2026-12-01T21:30:00Z\", \"tags\": [1, 1]}\n",
            "unique_items",
        ),
    ];
    for (n, (line, expected)) in lines.iter().enumerate() {
        assert!(child.write_stdin(line));
        assert!(
            child.wait_stdout(PATIENCE, |out| out.lines().count() == n + 1),
            "result {} before line {} is written: {}",
            n + 1,
            n + 2,
            child.stdout()
        );
        let out = child.stdout();
        let last = out.lines().last().unwrap();
        assert!(last.contains(expected), "line {}: {last}", n + 1);
    }
    let valid = b"{\"at\": \"2026-12-01T21:30:00Z\", \"status\": \"FAILED\", \"reason\": \"r\", \"tags\": [\"a\", \"b\"]}\n";
    for _ in 0..20_000 {
        assert!(child.write_stdin(valid));
    }
    assert!(
        child.wait_stdout(PATIENCE, |out| out.lines().count() == 4 + 20_000),
        "{}",
        child.stderr()
    );
    let peak = child.peak_rss_kib().expect("perago is running");
    let done = child.wait(PATIENCE);
    assert_eq!(done.code(), Some(1), "{}", done.stderr);
    assert!(peak < 20 * 1024, "peak resident memory {peak} KiB");
}

/// A pattern that backtracking engines take exponential time on is matched in linear time;
/// one that needs backtracking is refused when the schema loads, but a lookahead that opens it.
#[test]
fn patterns_never_stall() {
    let dir = tempfile::tempdir().unwrap();
    let schema = |name: &str, pattern: &str| {
        let path = dir.path().join(name);
        let text = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "string",
            "pattern": pattern,
        });
        std::fs::write(&path, text.to_string()).unwrap();
        path.display().to_string()
    };
    let nested = schema("nested.schema.json", "^(a+)+$");
    let hostile = format!("\"{}b\"", "a".repeat(100_000));
    let done = run(&["validate", "--schema", &nested], hostile.as_bytes());
    assert_eq!(done.code(), Some(1), "{}", done.stderr);
    assert!(
        done.stdout
            .starts_with("<stdin>:1: $: must match the pattern \"^(a+)+$\""),
        "{:.300}",
        done.stdout
    );
    let lookahead = schema("lookahead.schema.json", "^a+(?=b)");
    let done = run(&["validate", "--schema", &lookahead], b"\"a\"");
    assert_eq!(done.code(), Some(2));
    assert!(
        done.stderr
            .contains("`pattern`: lookahead `(?=` (at character 4) needs a backtracking engine"),
        "{}",
        done.stderr
    );
    // A lookahead that opens the pattern (Pydantic's `Decimal`) is matched as searches of its
    // own, in linear time too.
    let decimal = schema("decimal.schema.json", r"^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$");
    let hostile = format!("\"{}x\"", "1".repeat(100_000));
    let done = run(&["validate", "--schema", &decimal], hostile.as_bytes());
    assert_eq!(done.code(), Some(1), "{}", done.stderr);
}

/// After an input that cannot be read, the summary does not claim the documents were valid.
#[test]
fn the_summary_counts_what_was_skipped() {
    let done = run(
        &[
            "validate",
            "--schema",
            "worker-completion.v1",
            "/no/such/file",
        ],
        b"",
    );
    assert_eq!(done.code(), Some(2));
    assert_eq!(
        done.stderr,
        "perago: /no/such/file: No such file or directory (os error 2)\n\
         no document checked; 1 input skipped (see above)\n"
    );
}

/// `perago schemas | head`: a reader that stops early ends the command quietly.
#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    for args in [
        &["schemas"][..],
        &["validate", "--schema", "task-failure", "--help"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = perago(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{args:?}");
    }
}
