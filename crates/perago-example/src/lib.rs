//! An example perago task crate: three tasks modelled on the input/output contract's examples.
//!
//! - `validate_song` (workspace-free): is a song in the catalog and long enough? A song that is
//!   too short is a business outcome (`valid: false` with a `reason`), not a failure.
//! - `build_features` (workspace, read-only): counts the rows and feature columns of a feature
//!   set, a directory of CSV files in the workspace.
//! - `publish_features` (workspace, read-write): writes a summary of a feature set, and one of
//!   each of its files, under `summaries/`; the worker publishes them as a new commit.
//!
//! Their params and result types are generated from `schemas/` by `cargo xtask codegen` into
//! `src/contracts/`. `src/main.rs` is the binary: `perago_worker::cli::main` over [`registry`].

#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod contracts;

use contracts::build_features_params::BuildFeaturesParams;
use contracts::build_features_result::BuildFeaturesResult;
use contracts::publish_features_params::PublishFeaturesParams;
use contracts::publish_features_result::PublishFeaturesResult;
use contracts::validate_song_params::ValidateSongParams;
use contracts::validate_song_result::ValidateSongResult;
use perago::task::{Registry, TaskError};
use perago::workspace::Workspace;
use std::path::PathBuf;

/// The song catalog this example checks against: id and duration in seconds.
pub const CATALOG: &[(&str, i64)] = &[
    ("song-000123", 214),
    ("song-000124", 21),
    ("song-000125", 95),
];

/// Checks that a song is in the catalog and at least `min_duration_seconds` long.
///
/// A song that is too short is a valid outcome: `valid: false` and the reason. A song that is
/// not in the catalog is a terminal error: retrying the same input cannot help.
#[perago::task(
    name = "validate_song",
    retry_count = 2,
    retry_logic = FIXED,
    retry_delay_seconds = 5,
    timeout_seconds = 60,
    response_timeout_seconds = 30,
    owner_email = "songs@example.com"
)]
pub fn validate_song(params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> {
    let Some((_, duration)) = CATALOG.iter().find(|(id, _)| *id == params.song_id) else {
        return Err(TaskError::terminal(format!(
            "song {} is not in the catalog",
            params.song_id
        )));
    };
    let min = params.min_duration_seconds;
    Ok(if *duration >= min {
        ValidateSongResult {
            valid: true,
            reason: None,
        }
    } else {
        ValidateSongResult {
            valid: false,
            reason: Some(format!(
                "duration {duration}s is below the minimum of {min}s"
            )),
        }
    })
}

/// Counts the data rows and feature columns of a feature set: the CSV files of
/// `<feature_set>/` in the workspace (the repository's `features/` prefix). Every file has the
/// header `song_id,<feature>...`; the key column is not a feature.
#[perago::task(
    name = "build_features",
    timeout_seconds = 600,
    response_timeout_seconds = 120,
    owner_email = "features@example.com",
    workspace(
        prefix = "features/",
        access = read_only,
        pre = [require_glob("*/*.csv", min_count = 1)],
    )
)]
pub fn build_features(
    ws: &Workspace,
    params: BuildFeaturesParams,
) -> Result<BuildFeaturesResult, TaskError> {
    let exclude = params.columns.map(|c| c.exclude).unwrap_or_default();
    let set = FeatureSet::read(ws, &params.feature_set)?;
    let rows: i64 = set.rows.iter().sum();
    if rows < params.min_rows {
        return Err(TaskError::terminal(format!(
            "feature set {} has {rows} rows; min_rows={}",
            params.feature_set, params.min_rows
        )));
    }
    Ok(BuildFeaturesResult {
        row_count: rows,
        feature_count: set.features.iter().filter(|c| !exclude.contains(c)).count() as i64,
    })
}

/// Summarises a feature set: `summaries/<feature_set>.json` for the set, and
/// `summaries/<feature_set>/<file>.json` for each of its CSV files. The summaries depend only
/// on the data, so running it again on a commit it published changes nothing (a no-op
/// completion that keeps `ref`). At most 8 files may change per publication: a set of more
/// than 7 CSV files exceeds the budget.
#[perago::task(
    name = "publish_features",
    timeout_seconds = 600,
    response_timeout_seconds = 120,
    owner_email = "features@example.com",
    workspace(
        prefix = "features/",
        access = read_write,
        pre = [require_glob("*/*.csv", min_count = 1)],
        post = [require_glob("summaries/*.json", min_count = 1), forbid_glob("**/*.tmp")],
        publish_budget(max_files = 8, max_bytes = 1_000_000),
    )
)]
pub fn publish_features(
    ws: &mut Workspace,
    params: PublishFeaturesParams,
) -> Result<PublishFeaturesResult, TaskError> {
    let name = &params.feature_set;
    let set = FeatureSet::read(ws, name)?;
    let rows: i64 = set.rows.iter().sum();
    let dir = ws.path("summaries").join(name);
    std::fs::create_dir_all(&dir)?;
    for (file, count) in set.files.iter().zip(&set.rows) {
        let stem = file.file_stem().unwrap_or_default().to_string_lossy();
        let summary = serde_json::json!({"file": display(ws, file), "row_count": count});
        write_json(&dir.join(format!("{stem}.json")), &summary)?;
    }
    let summary = format!("summaries/{name}.json");
    let whole = serde_json::json!({
        "feature_set": name,
        "files": set.files.len(),
        "row_count": rows,
        "features": set.features,
    });
    write_json(&ws.path(&summary), &whole)?;
    Ok(PublishFeaturesResult {
        summary,
        files: set.files.len() as i64,
        row_count: rows,
        feature_count: set.features.len() as i64,
    })
}

/// Writes `value` to `path` through a temporary file, so a reader never sees half of it (and
/// the post guardrail `forbid_glob("**/*.tmp")` catches one left behind).
fn write_json(path: &std::path::Path, value: &serde_json::Value) -> Result<(), std::io::Error> {
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, format!("{value:#}\n"))?;
    std::fs::rename(&tmp, path)
}

/// A feature set as read from the workspace: its CSV files, their data rows and the feature
/// columns they share.
struct FeatureSet {
    files: Vec<PathBuf>,
    rows: Vec<i64>,
    features: Vec<String>,
}

impl FeatureSet {
    /// Reads `<name>/*.csv`. Every file has the header `song_id,<feature>...`; the key column
    /// is not a feature. No files, or files that disagree, are terminal errors.
    fn read(ws: &Workspace, name: &str) -> Result<FeatureSet, TaskError> {
        let files = csv_files(&ws.path(name))?;
        if files.is_empty() {
            return Err(TaskError::terminal(format!(
                "feature set {name} has no CSV files in the workspace"
            )));
        }
        let mut header: Option<Vec<String>> = None;
        let mut rows = Vec::with_capacity(files.len());
        for file in &files {
            // An unreadable file is an unknown error: `?` makes it a FAILED result.
            let text = std::fs::read_to_string(file)?;
            let mut lines = text.lines().filter(|l| !l.trim().is_empty());
            let columns: Vec<String> = lines
                .next()
                .unwrap_or_default()
                .split(',')
                .map(|c| c.trim().to_owned())
                .collect();
            if columns.first().map(String::as_str) != Some("song_id") {
                return Err(TaskError::terminal(format!(
                    "{} does not start with the key column song_id",
                    display(ws, file)
                )));
            }
            match &header {
                Some(h) if *h != columns => {
                    return Err(TaskError::terminal(format!(
                        "{} has other columns than {}",
                        display(ws, file),
                        display(ws, &files[0])
                    )));
                }
                Some(_) => {}
                None => header = Some(columns),
            }
            rows.push(lines.count() as i64);
        }
        let features = header.unwrap_or_default().into_iter().skip(1).collect();
        Ok(FeatureSet {
            files,
            rows,
            features,
        })
    }
}

/// The `*.csv` files directly in `dir`, sorted; none when `dir` does not exist.
fn csv_files(dir: &std::path::Path) -> Result<Vec<PathBuf>, std::io::Error> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_file() && path.extension().is_some_and(|e| e == "csv") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// A path relative to the workspace root, for messages.
fn display(ws: &Workspace, path: &std::path::Path) -> String {
    path.strip_prefix(ws.root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// This crate's tasks.
pub fn registry() -> Registry {
    perago::tasks![validate_song, build_features, publish_features]
}
