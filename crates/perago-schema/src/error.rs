//! What can go wrong between a schema file and generated code.

use std::fmt;
use std::path::PathBuf;

/// A schema outside the supported subset (or inconsistent within it), located precisely.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintError {
    /// The schema file.
    pub file: String,
    /// The JSON Pointer of the offending schema node (`""` for the root).
    pub pointer: String,
    /// The keyword at fault (`""` when the fault is the node itself, e.g. a schema that is
    /// not an object).
    pub keyword: String,
    /// What is wrong and, where it helps, what to write instead.
    pub message: String,
}

impl LintError {
    pub fn new(file: &str, pointer: &str, keyword: &str, message: impl Into<String>) -> Self {
        LintError {
            file: file.to_owned(),
            pointer: pointer.to_owned(),
            keyword: keyword.to_owned(),
            message: message.into(),
        }
    }
}

impl fmt::Display for LintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}: ", self.file, self.pointer)?;
        if !self.keyword.is_empty() {
            write!(f, "`{}`: ", self.keyword)?;
        }
        f.write_str(&self.message)
    }
}

/// Why a set of schemas could not be turned into an IR.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        message: String,
    },
    /// A file is not JSON (or repeats a key in one object).
    #[error("{file}: not valid JSON: {message}")]
    Parse {
        /// The schema file.
        file: String,
        /// The parser's error.
        message: String,
    },
    /// The schemas use what perago does not support, or contradict themselves.
    #[error("{}", lint_list(.0))]
    Lint(Vec<LintError>),
}

fn lint_list(errors: &[LintError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}
