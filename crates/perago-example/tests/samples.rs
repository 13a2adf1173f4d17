//! The sample inputs (`inputs/`) give the statuses their names promise, through the binary as
//! users run it; the workspace task's on a local store holding the sample repository
//! (`workspace/`), whose counts it reports. The worker, TaskDefs and the command line are
//! tested in `perago-worker`, on these tasks.

use perago_workspace::local::LocalStore;
use perago_workspace::{Metadata, transfer};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The commit the sample inputs name; the store below has another.
const SEED_REF: &str = "589f87704418c6bac80c5a6fc1b52c245af347b9ad1ea8d06597e4437fae4ca3";

/// A local store in `dir` with the sample repository imported into `song-000123`, and that
/// commit.
fn store(dir: &Path) -> (PathBuf, String) {
    let root = dir.join("store");
    let store = LocalStore::open(&root).unwrap();
    store.create_repository("song-000123", "main").unwrap();
    let commit = transfer::import(
        &store,
        "song-000123",
        "main",
        &crate_dir().join("workspace"),
        "",
        "example",
        &Metadata::new(),
    )
    .unwrap()
    .unwrap();
    (root, commit.id.to_string())
}

/// The sample input `name`, naming `commit` instead of the seed's, in a file of `dir`.
fn input_at(dir: &Path, name: &str, commit: &str) -> String {
    let text = std::fs::read_to_string(crate_dir().join("inputs").join(name)).unwrap();
    let path = dir.join(name.replace('/', "-"));
    std::fs::write(&path, text.replace(SEED_REF, commit)).unwrap();
    path.display().to_string()
}

/// `perago-example run <task> --input <file>`, with the store for a workspace task.
fn run(task: &str, input: &str, store: &Path) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perago-example"));
    cmd.args(["run", task, "--input", input])
        .env_remove("PERAGO_FAILURE_REASON_MAX_LENGTH");
    if task != "validate_song" {
        cmd.arg("--store").arg(store);
    }
    cmd.output().unwrap()
}

fn payload(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    })
}

#[test]
fn every_sample_input_gives_its_status() {
    let cases = [
        ("validate_song.json", 0, "COMPLETED"),
        ("validate_song-defaults.json", 0, "COMPLETED"),
        ("build_features.json", 0, "COMPLETED"),
        ("publish_features.json", 0, "COMPLETED"),
        ("invalid/validate_song-params-spread.json", 1, "FAILED"),
        ("invalid/validate_song-with-workspace.json", 1, "FAILED"),
        ("invalid/validate_song-params.json", 1, "FAILED"),
        (
            "invalid/validate_song-unknown-song.json",
            1,
            "FAILED_WITH_TERMINAL_ERROR",
        ),
        ("invalid/build_features-missing-workspace.json", 1, "FAILED"),
        ("invalid/build_features-extra-key.json", 1, "FAILED"),
        ("invalid/build_features-ref-type.json", 1, "FAILED"),
        (
            "invalid/build_features-empty-workspace-field.json",
            1,
            "FAILED",
        ),
        ("invalid/build_features-nested-extra.json", 1, "FAILED"),
        (
            "invalid/build_features-too-few-rows.json",
            1,
            "FAILED_WITH_TERMINAL_ERROR",
        ),
        (
            "invalid/publish_features-missing-feature-set.json",
            1,
            "FAILED",
        ),
        ("invalid/publish_features-unknown-param.json", 1, "FAILED"),
    ];
    let mut samples: Vec<String> = ["", "invalid/"]
        .into_iter()
        .flat_map(|sub| {
            std::fs::read_dir(crate_dir().join("inputs").join(sub))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.is_file())
                .map(move |p| format!("{sub}{}", p.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    samples.sort();
    let mut listed: Vec<String> = cases.iter().map(|(file, ..)| file.to_string()).collect();
    listed.sort();
    assert_eq!(listed, samples, "every sample input has its status here");
    let dir = tempfile::tempdir().unwrap();
    let (root, commit) = store(dir.path());
    for (file, code, status) in cases {
        let name = Path::new(file).file_stem().unwrap().to_string_lossy();
        let task = name.split('-').next().unwrap();
        let out = run(task, &input_at(dir.path(), file, &commit), &root);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{file}: {stderr}");
        let p = payload(&out);
        assert_eq!(p["status"], status, "{file}");
        if code == 1 {
            assert!(p.get("output").is_none(), "{file}");
            assert!(p["reasonForIncompletion"].as_str().is_some(), "{file}");
        }
    }
}

#[test]
fn the_sample_repository_has_100_rows_of_24_features_at_its_commit() {
    let dir = tempfile::tempdir().unwrap();
    let (root, commit) = store(dir.path());
    let input = input_at(dir.path(), "build_features.json", &commit);
    let out = run("build_features", &input, &root);
    let p = payload(&out);
    assert_eq!(
        p["output"]["result"],
        json!({"row_count": 100, "feature_count": 24})
    );
    assert_eq!(p["output"]["workspace"]["ref"], commit.as_str());
}
