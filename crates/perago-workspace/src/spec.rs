//! What a workspace task declares about its workspace, in its `#[perago::task(workspace(...))]`
//! attribute. Worker-side only: never part of the input/output contract or the TaskDef.

use std::fmt;

/// What a workspace task declares about its workspace. Worker-side only: never part of the
/// input/output contract or the TaskDef.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkspaceSpec {
    /// The part of the repository the task works on (`""`: all of it). The local workspace
    /// directory holds this prefix: handler paths and guardrail globs are relative to it.
    pub prefix: &'static str,
    /// Read-only (`&Workspace`) or read-write (`&mut Workspace`).
    pub access: Access,
    /// Checked before the handler runs; a failure is `FAILED_WITH_TERMINAL_ERROR`.
    pub pre: &'static [Guardrail],
    /// Checked after the result is valid; a failure is `FAILED`.
    pub post: &'static [Guardrail],
    /// Limits of one publication (read-write tasks; enforced by the storage layer).
    pub publish_budget: Option<PublishBudget>,
}

/// A workspace task's access mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The task only reads; its completion keeps the input `ref`.
    ReadOnly,
    /// The task may write; a publication replaces `ref` with the published commit.
    ReadWrite,
}

impl Access {
    /// `read_only` or `read_write`, as written in the attribute.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::ReadOnly => "read_only",
            Access::ReadWrite => "read_write",
        }
    }
}

/// A check of the local workspace directory, before or after the handler.
///
/// Every check walks the directory once, each directory's entries in name order, and never
/// follows a symbolic link: a symlink is not a regular file for these checks (it neither
/// matches a glob nor counts towards a limit), and nothing behind a symlinked directory is
/// seen, so no check reads outside the workspace root. "Files" below means regular files.
/// Globs and paths are relative to the workspace root, `/`-separated, with no leading `/` and
/// no `.` or `..` segments; [`Guardrail::validate`] states the rules, which the macro checks at
/// compile time and [`check_guardrail`](crate::guardrail::check_guardrail) again at run time.
///
/// | attribute | holds when | reason when it does not |
/// |---|---|---|
/// | `require_glob("raw/**/*.parquet", min_count = 1)` | at least `min_count` files match (default 1) | `require_glob('raw/**/*.parquet') matched 0 files; min_count=1` |
/// | `forbid_glob("**/*.tmp")` | no file matches | `forbid_glob('**/*.tmp') matched 2 files: a.tmp, b/c.tmp` |
/// | `require_file("manifest.json")` | that path is a regular file | `require_file('manifest.json') found no file` |
/// | `max_total_bytes(1_000_000)` | the files' sizes add up to at most that | `max_total_bytes(1000000) found 1500000 bytes in 12 files` |
/// | `max_files(100)` | there are at most that many files | `max_files(100) found 120 files` |
///
/// Globs: `*` and `?` stay within one path segment, `**` crosses them (`**/*.tmp` also matches
/// `a.tmp` at the root), `[ab]` and `{a,b}` as usual, `\` escapes. A directory that cannot be
/// read fails every check, naming its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guardrail {
    /// `require_glob("pattern", min_count = N)`: at least `min_count` files match `pattern`.
    RequireGlob {
        /// The glob.
        pattern: &'static str,
        /// How many files must match (≥ 1).
        min_count: u64,
    },
    /// `forbid_glob("pattern")`: no file matches `pattern`.
    ForbidGlob {
        /// The glob.
        pattern: &'static str,
    },
    /// `require_file("path")`: `path` is a regular file. A directory, a symlink (at `path` or at
    /// a directory on the way) or a special file does not count.
    RequireFile {
        /// The path, relative to the workspace root.
        path: &'static str,
    },
    /// `max_total_bytes(N)`: the sizes of all files add up to at most `max_bytes`.
    MaxTotalBytes {
        /// The most bytes (≥ 1).
        max_bytes: u64,
    },
    /// `max_files(N)`: there are at most `max_files` files.
    MaxFiles {
        /// The most files (≥ 1).
        max_files: u64,
    },
}

impl Guardrail {
    /// Whether the guardrail is well-formed: globs compile and, like paths, are relative to
    /// the workspace root (no leading `/`, no empty, `.` or `..` segments, no trailing `/`);
    /// paths use `/` and hold no `*` or `?`; counts and sizes are ≥ 1. `#[perago::task]`
    /// refuses the same at compile time; [`check_guardrail`](crate::guardrail::check_guardrail)
    /// reports a malformed guardrail as a violation rather than checking it.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            Guardrail::RequireGlob { pattern, min_count } => {
                check_glob(pattern)?;
                at_least_one("min_count", min_count)
            }
            Guardrail::ForbidGlob { pattern } => check_glob(pattern),
            Guardrail::RequireFile { path } => check_path(path),
            Guardrail::MaxTotalBytes { max_bytes } => at_least_one("max_total_bytes", max_bytes),
            Guardrail::MaxFiles { max_files } => at_least_one("max_files", max_files),
        }
    }
}

fn at_least_one(what: &str, n: u64) -> Result<(), String> {
    if n == 0 {
        return Err(format!("`{what}` takes an integer >= 1, got 0"));
    }
    Ok(())
}

/// The rules a guardrail glob follows (see [`Guardrail::validate`]).
pub fn check_glob(pattern: &str) -> Result<(), String> {
    relative("glob", pattern)?;
    compile_glob(pattern).map(drop)
}

/// The rules a `require_file` path follows (see [`Guardrail::validate`]).
pub fn check_path(path: &str) -> Result<(), String> {
    relative("path", path)?;
    if path.contains('\\') {
        return Err(format!("path {path:?} must use `/` separators"));
    }
    if path.contains(['*', '?']) {
        return Err(format!(
            "path {path:?} is a plain path, not a glob; to match a pattern use `require_glob`"
        ));
    }
    Ok(())
}

/// How guardrail globs compile: `*` within a segment, `\` escapes, on every platform.
pub(crate) fn compile_glob(pattern: &str) -> Result<globset::GlobMatcher, String> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|glob| glob.compile_matcher())
        .map_err(|e| format!("invalid glob {pattern:?}: {}", e.kind()))
}

/// Relative to the workspace root: what both globs and paths must be.
fn relative(what: &str, text: &str) -> Result<(), String> {
    if text.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if text.starts_with('/') {
        return Err(format!(
            "{what} {text:?} must be relative to the workspace root, with no leading `/`"
        ));
    }
    if text.ends_with('/') {
        return Err(format!(
            "{what} {text:?} ends in `/`, but guardrails look at files, not directories"
        ));
    }
    if text.split('/').any(|seg| seg.is_empty()) {
        return Err(format!("{what} {text:?} has an empty segment (`//`)"));
    }
    if text.split('/').any(|seg| seg == "." || seg == "..") {
        return Err(format!(
            "{what} {text:?} must not have `.` or `..` segments: it is relative to the workspace \
             root, which guardrails never leave"
        ));
    }
    Ok(())
}

/// How reasons name a guardrail: `require_glob('raw/**/*.parquet')`, `forbid_glob('**/*.tmp')`,
/// `require_file('manifest.json')`, `max_total_bytes(1000000)`, `max_files(100)`.
impl fmt::Display for Guardrail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Guardrail::RequireGlob { pattern, .. } => write!(f, "require_glob('{pattern}')"),
            Guardrail::ForbidGlob { pattern } => write!(f, "forbid_glob('{pattern}')"),
            Guardrail::RequireFile { path } => write!(f, "require_file('{path}')"),
            Guardrail::MaxTotalBytes { max_bytes } => write!(f, "max_total_bytes({max_bytes})"),
            Guardrail::MaxFiles { max_files } => write!(f, "max_files({max_files})"),
        }
    }
}

/// The most one publication of a read-write task may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublishBudget {
    /// Files added, changed or removed.
    pub max_files: Option<u64>,
    /// Bytes uploaded.
    pub max_bytes: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guardrails_display_as_in_reasons() {
        let cases = [
            (
                Guardrail::RequireGlob {
                    pattern: "raw/**/*.parquet",
                    min_count: 2,
                },
                "require_glob('raw/**/*.parquet')",
            ),
            (
                Guardrail::ForbidGlob {
                    pattern: "**/*.tmp",
                },
                "forbid_glob('**/*.tmp')",
            ),
            (
                Guardrail::RequireFile {
                    path: "manifest.json",
                },
                "require_file('manifest.json')",
            ),
            (
                Guardrail::MaxTotalBytes { max_bytes: 1000000 },
                "max_total_bytes(1000000)",
            ),
            (Guardrail::MaxFiles { max_files: 100 }, "max_files(100)"),
        ];
        for (g, text) in cases {
            assert_eq!(g.to_string(), text);
            assert_eq!(g.validate(), Ok(()), "{g}");
        }
    }

    #[test]
    fn globs_are_relative_and_valid() {
        for ok in [
            "*",
            "**",
            "raw/**/*.parquet",
            "a/{b,c}/*.csv",
            "x\\*y",
            ".hidden/*",
        ] {
            assert_eq!(check_glob(ok), Ok(()), "{ok}");
        }
        let bad = [
            ("", "glob is empty"),
            (
                "/raw/*",
                "glob \"/raw/*\" must be relative to the workspace root, with no leading `/`",
            ),
            (
                "raw/",
                "glob \"raw/\" ends in `/`, but guardrails look at files, not directories",
            ),
            ("a//b", "glob \"a//b\" has an empty segment (`//`)"),
            (
                "../x/*",
                "glob \"../x/*\" must not have `.` or `..` segments: it is relative to the \
                 workspace root, which guardrails never leave",
            ),
            (
                "raw/[",
                "invalid glob \"raw/[\": unclosed character class; missing ']'",
            ),
        ];
        for (glob, why) in bad {
            assert_eq!(check_glob(glob), Err(why.to_owned()), "{glob}");
        }
    }

    #[test]
    fn paths_are_plain_and_relative() {
        for ok in ["manifest.json", "a/b/c.txt", ".env", "data[1].csv"] {
            assert_eq!(check_path(ok), Ok(()), "{ok}");
        }
        let bad = [
            ("", "path is empty"),
            (
                "/etc/passwd",
                "path \"/etc/passwd\" must be relative to the workspace root, with no leading `/`",
            ),
            (
                "a/./b",
                "path \"a/./b\" must not have `.` or `..` segments: it is relative to the \
                 workspace root, which guardrails never leave",
            ),
            ("a\\b", "path \"a\\\\b\" must use `/` separators"),
            (
                "out/*.csv",
                "path \"out/*.csv\" is a plain path, not a glob; to match a pattern use \
                 `require_glob`",
            ),
        ];
        for (path, why) in bad {
            assert_eq!(check_path(path), Err(why.to_owned()), "{path}");
        }
    }

    #[test]
    fn counts_and_sizes_are_at_least_one() {
        let zero = [
            (
                Guardrail::RequireGlob {
                    pattern: "*",
                    min_count: 0,
                },
                "`min_count` takes an integer >= 1, got 0",
            ),
            (
                Guardrail::MaxTotalBytes { max_bytes: 0 },
                "`max_total_bytes` takes an integer >= 1, got 0",
            ),
            (
                Guardrail::MaxFiles { max_files: 0 },
                "`max_files` takes an integer >= 1, got 0",
            ),
        ];
        for (g, why) in zero {
            assert_eq!(g.validate(), Err(why.to_owned()), "{g}");
        }
    }
}
