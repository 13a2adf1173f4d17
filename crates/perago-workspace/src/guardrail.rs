//! Guardrails: checks of the workspace directory before the handler runs (a failure is
//! `FAILED_WITH_TERMINAL_ERROR`: the same input commit cannot pass) and after it (`FAILED`).

use crate::spec::Guardrail;
use globset::GlobBuilder;
use std::path::Path;

/// A guardrail that did not hold.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GuardrailViolation {
    /// The guardrail, e.g. `require_glob('raw/**/*.parquet')`.
    pub guardrail: String,
    /// The files that matched (at most the first 20, sorted).
    pub matched: Vec<String>,
    /// How many files matched.
    pub matched_count: u64,
    /// How many were required.
    pub min_count: u64,
    /// Why the directory could not be read, when it could not.
    pub error: Option<String>,
}

impl GuardrailViolation {
    /// `require_glob('raw/**/*.parquet') matched 0 files; min_count=1`.
    pub fn describe(&self) -> String {
        match &self.error {
            Some(error) => format!("{} could not read the workspace: {error}", self.guardrail),
            None => format!(
                "{} matched {} file{}; min_count={}",
                self.guardrail,
                self.matched_count,
                if self.matched_count == 1 { "" } else { "s" },
                self.min_count
            ),
        }
    }
}

/// Checks `guardrail` against the directory `root`.
pub fn check_guardrail(guardrail: &Guardrail, root: &Path) -> Result<(), GuardrailViolation> {
    match guardrail {
        Guardrail::RequireGlob { pattern, min_count } => {
            let mut violation = GuardrailViolation {
                guardrail: guardrail.to_string(),
                matched: Vec::new(),
                matched_count: 0,
                min_count: *min_count,
                error: None,
            };
            match glob_matches(pattern, root) {
                Ok(files) => {
                    if files.len() as u64 >= *min_count {
                        return Ok(());
                    }
                    violation.matched_count = files.len() as u64;
                    violation.matched = files.into_iter().take(20).collect();
                }
                Err(error) => violation.error = Some(error),
            }
            Err(violation)
        }
    }
}

/// The files under `root` whose `/`-separated relative path matches `pattern`, sorted.
pub fn glob_matches(pattern: &str, root: &Path) -> Result<Vec<String>, String> {
    let glob = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| e.to_string())?
        .compile_matcher();
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = entry.map_err(|e| e.to_string())?;
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let relative: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let relative = relative.join("/");
        if glob.is_match(&relative) {
            files.push(relative);
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn require_glob_counts_files_across_directories() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("raw/2024/01")).unwrap();
        std::fs::write(root.join("raw/a.parquet"), "").unwrap();
        std::fs::write(root.join("raw/2024/01/b.parquet"), "").unwrap();
        std::fs::write(root.join("raw/2024/01/c.csv"), "").unwrap();
        std::fs::create_dir_all(root.join("raw/d.parquet")).unwrap(); // a directory: not counted
        assert_eq!(
            glob_matches("raw/**/*.parquet", root).unwrap(),
            ["raw/2024/01/b.parquet", "raw/a.parquet"]
        );
        // `*` stays within a segment.
        assert_eq!(
            glob_matches("raw/*.parquet", root).unwrap(),
            ["raw/a.parquet"]
        );
        let two = Guardrail::RequireGlob {
            pattern: "raw/**/*.parquet",
            min_count: 2,
        };
        assert!(check_guardrail(&two, root).is_ok());
        let three = Guardrail::RequireGlob {
            pattern: "raw/**/*.parquet",
            min_count: 3,
        };
        let v = check_guardrail(&three, root).unwrap_err();
        assert_eq!(
            v.describe(),
            "require_glob('raw/**/*.parquet') matched 2 files; min_count=3"
        );
    }

    #[test]
    fn a_missing_root_is_reported() {
        let g = Guardrail::RequireGlob {
            pattern: "*",
            min_count: 1,
        };
        let v = check_guardrail(&g, Path::new("/nonexistent/perago/dir")).unwrap_err();
        assert!(v.error.is_some(), "{v:?}");
    }
}
