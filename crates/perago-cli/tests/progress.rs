//! Progress on standard error: drawn for a person at a terminal (here a pseudo-terminal made
//! by `script`), never into a pipe, never with `--quiet`, never on standard output.

use std::path::Path;
use std::process::Command;

fn perago() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perago"));
    cmd.env_remove("PERAGO_STORE")
        .env_remove("LAKECTL_SERVER_ENDPOINT_URL");
    cmd
}

/// `lines` task results, one per line.
fn results(dir: &Path, lines: usize) -> String {
    let path = dir.join("results.jsonl");
    let line = r#"{"status": "COMPLETED", "output": {"result": {"valid": true}}}"#;
    std::fs::write(&path, format!("{line}\n").repeat(lines)).unwrap();
    path.to_str().unwrap().to_owned()
}

const SCHEMA: &str = "workspace-free-task-result";

#[test]
fn a_terminal_sees_lines_counted_on_standard_error() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("no `script` here to make a terminal; skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = results(dir.path(), 2000);
    let command = format!(
        "{} validate --schema {SCHEMA} --lines {file} > {}",
        env!("CARGO_BIN_EXE_perago"),
        dir.path().join("out").display()
    );
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .unwrap();
    let terminal = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{terminal}");
    assert!(terminal.contains(" lines checked ("), "{terminal}");
    assert!(terminal.contains("2000 documents valid"), "{terminal}");
    let report = std::fs::read_to_string(dir.path().join("out")).unwrap();
    assert_eq!(
        report, "",
        "text output of valid documents is empty; no progress in it"
    );
}

#[test]
fn a_pipe_gets_no_progress_and_quiet_gets_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = results(dir.path(), 2000);
    let piped = perago()
        .args([
            "validate", "--schema", SCHEMA, "--lines", "--format", "json", &file,
        ])
        .output()
        .unwrap();
    assert!(piped.status.success());
    assert_eq!(String::from_utf8_lossy(&piped.stderr), "");
    let stdout = String::from_utf8(piped.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 2000);
    assert!(
        stdout.lines().all(|l| l.starts_with('{')),
        "only JSON on standard output"
    );
    let text = perago()
        .args(["validate", "--schema", SCHEMA, "--lines", &file])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&text.stderr),
        "2000 documents valid\n"
    );
    let quiet = perago()
        .args(["validate", "--schema", SCHEMA, "--lines", "--quiet", &file])
        .output()
        .unwrap();
    assert!(quiet.status.success());
    assert_eq!(String::from_utf8_lossy(&quiet.stderr), "");

    // workspace import and export: with --quiet, only the commit id.
    let store = dir.path().join("store");
    let source = dir.path().join("source");
    std::fs::create_dir(&source).unwrap();
    std::fs::write(source.join("a.csv"), "song_id\n").unwrap();
    let store = store.to_str().unwrap();
    let import = perago()
        .args([
            "workspace",
            "import",
            source.to_str().unwrap(),
            "--repository",
            "songs",
        ])
        .args(["--store", store, "--quiet"])
        .output()
        .unwrap();
    assert!(import.status.success(), "{import:?}");
    assert_eq!(String::from_utf8_lossy(&import.stderr), "");
    assert_eq!(import.stdout.len(), 65, "the commit id and a newline");
    let out = dir.path().join("out");
    let export = perago()
        .args([
            "workspace",
            "export",
            "main",
            out.to_str().unwrap(),
            "--repository",
            "songs",
        ])
        .args(["--store", store, "-q"])
        .output()
        .unwrap();
    assert!(export.status.success(), "{export:?}");
    assert_eq!(String::from_utf8_lossy(&export.stderr), "");
    assert_eq!(
        std::fs::read_to_string(out.join("a.csv")).unwrap(),
        "song_id\n"
    );
}
