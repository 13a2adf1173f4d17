//! An example perago task crate: two tasks modelled on the input/output contract's examples.
//!
//! - `validate_song` (workspace-free): is a song in the catalog and long enough? A song that is
//!   too short is a business outcome (`valid: false` with a `reason`), not a failure.
//! - `build_features` (workspace, read-only): counts the rows and feature columns of a feature
//!   set, a directory of CSV files in the workspace.
//!
//! Their params and result types are generated from `schemas/` by `cargo xtask codegen` into
//! `src/contracts/`. `src/main.rs` is the binary: `perago_conductor::cli::main` over [`registry`].

#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod contracts;

use contracts::build_features_params::BuildFeaturesParams;
use contracts::build_features_result::BuildFeaturesResult;
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
    let dir = ws.path(&params.feature_set);
    let files = csv_files(&dir)?;
    if files.is_empty() {
        return Err(TaskError::terminal(format!(
            "feature set {} has no CSV files in the workspace",
            params.feature_set
        )));
    }
    let exclude = params.columns.map(|c| c.exclude).unwrap_or_default();
    let mut header: Option<Vec<String>> = None;
    let mut rows: i64 = 0;
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
        rows += lines.count() as i64;
    }
    let features = header
        .unwrap_or_default()
        .iter()
        .skip(1)
        .filter(|c| !exclude.contains(c))
        .count() as i64;
    if rows < params.min_rows {
        return Err(TaskError::terminal(format!(
            "feature set {} has {rows} rows; min_rows={}",
            params.feature_set, params.min_rows
        )));
    }
    Ok(BuildFeaturesResult {
        row_count: rows,
        feature_count: features,
    })
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
    perago::tasks![validate_song, build_features]
}
