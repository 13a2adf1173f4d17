//! Guardrails: checks of the workspace directory before the handler runs (a failure is
//! `FAILED_WITH_TERMINAL_ERROR`: the same input commit cannot pass) and after it (`FAILED`).
//!
//! Each check walks the directory at most once, every directory's entries in name order, and
//! never follows a symbolic link: a symlink is not a regular file here, and the walk does not
//! enter a symlinked directory, so no check looks outside the root. See [`Guardrail`] for the
//! kinds and their reasons.

use crate::spec::{Guardrail, compile_glob};
use std::io;
use std::path::{Path, PathBuf};

/// How many files a violation keeps in [`GuardrailViolation::matched`].
pub const MAX_MATCHED: usize = 20;

/// How many files a reason lists before `, …`.
const LISTED_IN_REASON: usize = 5;

/// A guardrail that did not hold: what the worker's log records (serialised with serde) and,
/// through [`describe`](GuardrailViolation::describe), the task's reason.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GuardrailViolation {
    /// The guardrail, e.g. `require_glob('raw/**/*.parquet')`.
    pub guardrail: String,
    /// What was found, e.g. `matched 0 files; min_count=1`.
    pub detail: String,
    /// The files that matched a glob (`require_glob`, `forbid_glob`): at most the first
    /// [`MAX_MATCHED`], in walk order. Empty for the other guardrails. (A boxed slice keeps the
    /// violation, an `Err` of every check, under 128 bytes.)
    pub matched: Box<[String]>,
    /// How many files counted: those matching the glob, or every file for `max_files` and
    /// `max_total_bytes`. `None` for `require_file` and when the check could not be made.
    pub files: Option<u64>,
    /// The files' total size (`max_total_bytes` only).
    pub bytes: Option<u64>,
    /// Why the check could not be made: a path that could not be read (named), or a malformed
    /// guardrail. The guardrail then fails, whatever it checks.
    pub error: Option<String>,
}

impl GuardrailViolation {
    /// The reason, e.g. `require_glob('raw/**/*.parquet') matched 0 files; min_count=1` (the
    /// runtime prefixes `pre guardrail ` or `post guardrail `).
    pub fn describe(&self) -> String {
        format!("{} {}", self.guardrail, self.detail)
    }

    fn new(guardrail: &Guardrail, detail: String) -> GuardrailViolation {
        GuardrailViolation {
            guardrail: guardrail.to_string(),
            detail,
            matched: Box::default(),
            files: None,
            bytes: None,
            error: None,
        }
    }

    /// The check could not be made.
    fn unreadable(guardrail: &Guardrail, error: String) -> GuardrailViolation {
        GuardrailViolation {
            error: Some(error.clone()),
            ..GuardrailViolation::new(guardrail, format!("could not read the workspace: {error}"))
        }
    }
}

/// Checks `guardrail` against the directory `root`.
pub fn check_guardrail(guardrail: &Guardrail, root: &Path) -> Result<(), GuardrailViolation> {
    if let Err(why) = guardrail.validate() {
        return Err(GuardrailViolation {
            error: Some(why.clone()),
            ..GuardrailViolation::new(guardrail, format!("is malformed: {why}"))
        });
    }
    let unreadable = |error| GuardrailViolation::unreadable(guardrail, error);
    match *guardrail {
        Guardrail::RequireGlob { pattern, min_count } => {
            let found = matching(pattern, root).map_err(unreadable)?;
            if found.count >= min_count {
                return Ok(());
            }
            let detail = format!("matched {}; min_count={min_count}", files(found.count));
            Err(found.into_violation(guardrail, detail))
        }
        Guardrail::ForbidGlob { pattern } => {
            let found = matching(pattern, root).map_err(unreadable)?;
            if found.count == 0 {
                return Ok(());
            }
            let mut listed = found.first[..found.first.len().min(LISTED_IN_REASON)].join(", ");
            if found.count > LISTED_IN_REASON as u64 {
                listed.push_str(", …");
            }
            let detail = format!("matched {}: {listed}", files(found.count));
            Err(found.into_violation(guardrail, detail))
        }
        Guardrail::RequireFile { path } => {
            let detail = match lookup(root, path).map_err(unreadable)? {
                Entry::File => return Ok(()),
                Entry::Missing => "found no file".to_owned(),
                Entry::Directory => "found a directory, not a regular file".to_owned(),
                Entry::Special => "found a special file, not a regular file".to_owned(),
                Entry::Symlink(at) if at == path => {
                    "found a symlink, not a regular file (guardrails do not follow symlinks)"
                        .to_owned()
                }
                Entry::Symlink(at) => {
                    format!("found a symlink at '{at}' (guardrails do not follow symlinks)")
                }
            };
            Err(GuardrailViolation::new(guardrail, detail))
        }
        Guardrail::MaxTotalBytes { max_bytes } => {
            let (mut count, mut bytes) = (0u64, 0u64);
            walk(root, |_, entry| {
                let size = entry.metadata().map_err(|e| walk_error(root, e))?.len();
                count += 1;
                bytes = bytes.saturating_add(size);
                Ok(())
            })
            .map_err(unreadable)?;
            if bytes <= max_bytes {
                return Ok(());
            }
            Err(GuardrailViolation {
                files: Some(count),
                bytes: Some(bytes),
                ..GuardrailViolation::new(
                    guardrail,
                    format!("found {} in {}", plural(bytes, "byte"), files(count)),
                )
            })
        }
        Guardrail::MaxFiles { max_files } => {
            let mut count = 0u64;
            walk(root, |_, _| {
                count += 1;
                Ok(())
            })
            .map_err(unreadable)?;
            if count <= max_files {
                return Ok(());
            }
            Err(GuardrailViolation {
                files: Some(count),
                ..GuardrailViolation::new(guardrail, format!("found {}", files(count)))
            })
        }
    }
}

/// The files under `root` whose `/`-separated relative path matches `pattern`, in walk order
/// (each directory's entries by name, depth first). Symlinks are not followed and never match.
pub fn glob_matches(pattern: &str, root: &Path) -> Result<Vec<String>, String> {
    let glob = compile_glob(pattern)?;
    let mut files = Vec::new();
    walk(root, |relative, _| {
        if glob.is_match(relative) {
            files.push(relative.to_owned());
        }
        Ok(())
    })?;
    Ok(files)
}

/// The files matching a glob: how many, and the first [`MAX_MATCHED`].
struct Found {
    count: u64,
    first: Vec<String>,
}

impl Found {
    fn into_violation(self, guardrail: &Guardrail, detail: String) -> GuardrailViolation {
        GuardrailViolation {
            matched: self.first.into_boxed_slice(),
            files: Some(self.count),
            ..GuardrailViolation::new(guardrail, detail)
        }
    }
}

/// One walk counting the files that match `pattern` (already validated).
fn matching(pattern: &str, root: &Path) -> Result<Found, String> {
    let glob = compile_glob(pattern)?;
    let mut found = Found {
        count: 0,
        first: Vec::new(),
    };
    walk(root, |relative, _| {
        if glob.is_match(relative) {
            found.count += 1;
            if found.first.len() < MAX_MATCHED {
                found.first.push(relative.to_owned());
            }
        }
        Ok(())
    })?;
    Ok(found)
}

/// Calls `each` with every regular file under `root` (its `/`-separated path relative to
/// `root`), each directory's entries by name, depth first, without following symlinks. Stops
/// at the first entry that cannot be read; the error names its path.
fn walk(
    root: &Path,
    mut each: impl FnMut(&str, &walkdir::DirEntry) -> Result<(), String>,
) -> Result<(), String> {
    for entry in walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
    {
        let entry = entry.map_err(|e| walk_error(root, e))?;
        if entry.depth() == 0 {
            if !entry.file_type().is_dir() {
                return Err(format!("{}: not a directory", root.display()));
            }
            continue;
        }
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
        each(&relative.join("/"), &entry)?;
    }
    Ok(())
}

/// `<path>: <why>`, naming the path that could not be read.
fn walk_error(root: &Path, e: walkdir::Error) -> String {
    let path = e.path().unwrap_or(root).display().to_string();
    match e.io_error() {
        Some(io) => format!("{path}: {io}"),
        None => format!("{path}: {e}"),
    }
}

/// What `require_file` finds at its path.
#[derive(Debug, PartialEq, Eq)]
enum Entry {
    File,
    Missing,
    Directory,
    /// A socket, FIFO or device.
    Special,
    /// A symlink at this relative path (the file's, or a directory's on the way).
    Symlink(String),
}

/// Looks up `path` (already validated) under `root` one segment at a time, never through a
/// symlink.
fn lookup(root: &Path, path: &str) -> Result<Entry, String> {
    let unreadable = |at: &Path, e: io::Error| format!("{}: {e}", at.display());
    let meta = std::fs::metadata(root).map_err(|e| unreadable(root, e))?;
    if !meta.is_dir() {
        return Err(format!("{}: not a directory", root.display()));
    }
    let segments: Vec<&str> = path.split('/').collect();
    let mut at = PathBuf::from(root);
    for (i, segment) in segments.iter().enumerate() {
        at.push(segment);
        let meta = match std::fs::symlink_metadata(&at) {
            Ok(meta) => meta,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(Entry::Missing);
            }
            Err(e) => return Err(unreadable(&at, e)),
        };
        let last = i + 1 == segments.len();
        let file_type = meta.file_type();
        if file_type.is_symlink() {
            return Ok(Entry::Symlink(segments[..=i].join("/")));
        }
        if !last {
            if !file_type.is_dir() {
                return Ok(Entry::Missing);
            }
            continue;
        }
        return Ok(if file_type.is_file() {
            Entry::File
        } else if file_type.is_dir() {
            Entry::Directory
        } else {
            Entry::Special
        });
    }
    Ok(Entry::Missing)
}

/// `1 file`, `2 files`.
fn files(n: u64) -> String {
    plural(n, "file")
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A workspace with the given files (path, contents), directories created as needed.
    fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, contents) in files {
            let path = dir.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, contents).unwrap();
        }
        dir
    }

    fn reason(guardrail: Guardrail, root: &Path) -> String {
        check_guardrail(&guardrail, root).unwrap_err().describe()
    }

    #[test]
    fn require_glob_counts_files_across_directories() {
        let dir = workspace(&[
            ("raw/a.parquet", ""),
            ("raw/2024/01/b.parquet", ""),
            ("raw/2024/01/c.csv", ""),
        ]);
        let root = dir.path();
        fs::create_dir_all(root.join("raw/d.parquet")).unwrap(); // a directory: not counted
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
        assert_eq!(check_guardrail(&two, root), Ok(()));
        let three = Guardrail::RequireGlob {
            pattern: "raw/**/*.parquet",
            min_count: 3,
        };
        let v = check_guardrail(&three, root).unwrap_err();
        assert_eq!(
            v.describe(),
            "require_glob('raw/**/*.parquet') matched 2 files; min_count=3"
        );
        assert_eq!(*v.matched, ["raw/2024/01/b.parquet", "raw/a.parquet"]);
        assert_eq!(v.files, Some(2));
        assert_eq!(v.error, None);
    }

    #[test]
    fn require_glob_keeps_the_seed_reason() {
        let dir = workspace(&[("raw/notes.txt", "")]);
        let g = Guardrail::RequireGlob {
            pattern: "raw/**/*.parquet",
            min_count: 1,
        };
        assert_eq!(
            reason(g, dir.path()),
            "require_glob('raw/**/*.parquet') matched 0 files; min_count=1"
        );
        let two = Guardrail::RequireGlob {
            pattern: "raw/*",
            min_count: 2,
        };
        assert_eq!(
            reason(two, dir.path()),
            "require_glob('raw/*') matched 1 file; min_count=2"
        );
    }

    #[test]
    fn forbid_glob() {
        let g = Guardrail::ForbidGlob {
            pattern: "**/*.tmp",
        };
        let clean = workspace(&[("a.csv", ""), ("b/c.csv", "")]);
        assert_eq!(check_guardrail(&g, clean.path()), Ok(()));

        let one = workspace(&[("a.csv", ""), ("b/c.tmp", "")]);
        assert_eq!(
            reason(g, one.path()),
            "forbid_glob('**/*.tmp') matched 1 file: b/c.tmp"
        );

        // `**/` matches at the root too.
        let two = workspace(&[("a.tmp", ""), ("b/c.tmp", ""), ("b/c.csv", "")]);
        let v = check_guardrail(&g, two.path()).unwrap_err();
        assert_eq!(
            v.describe(),
            "forbid_glob('**/*.tmp') matched 2 files: a.tmp, b/c.tmp"
        );
        assert_eq!(*v.matched, ["a.tmp", "b/c.tmp"]);
        assert_eq!(v.files, Some(2));
    }

    #[test]
    fn forbid_glob_lists_a_few_and_keeps_twenty() {
        let names: Vec<String> = (0..25).map(|i| format!("x/{i:02}.tmp")).collect();
        let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "")).collect();
        let dir = workspace(&files);
        let v =
            check_guardrail(&Guardrail::ForbidGlob { pattern: "x/*.tmp" }, dir.path()).unwrap_err();
        assert_eq!(
            v.describe(),
            "forbid_glob('x/*.tmp') matched 25 files: x/00.tmp, x/01.tmp, x/02.tmp, x/03.tmp, \
             x/04.tmp, …"
        );
        assert_eq!(v.matched.len(), MAX_MATCHED);
        assert_eq!(v.matched[19], "x/19.tmp");
        assert_eq!(v.files, Some(25));

        // Exactly the listed number: no ellipsis.
        let five = workspace(&files[..5]);
        assert_eq!(
            reason(Guardrail::ForbidGlob { pattern: "x/*.tmp" }, five.path()),
            "forbid_glob('x/*.tmp') matched 5 files: x/00.tmp, x/01.tmp, x/02.tmp, x/03.tmp, \
             x/04.tmp"
        );
    }

    #[test]
    fn require_file() {
        let dir = workspace(&[("manifest.json", "{}"), ("out/data.csv", "")]);
        let root = dir.path();
        fs::create_dir_all(root.join("out/sub")).unwrap();
        let ok = |path| check_guardrail(&Guardrail::RequireFile { path }, root);
        let reason = |path| reason(Guardrail::RequireFile { path }, root);
        assert_eq!(ok("manifest.json"), Ok(()));
        assert_eq!(ok("out/data.csv"), Ok(()));
        assert_eq!(
            reason("missing.json"),
            "require_file('missing.json') found no file"
        );
        assert_eq!(
            reason("nowhere/manifest.json"),
            "require_file('nowhere/manifest.json') found no file"
        );
        // A file where a directory would be.
        assert_eq!(
            reason("manifest.json/x"),
            "require_file('manifest.json/x') found no file"
        );
        assert_eq!(
            reason("out/sub"),
            "require_file('out/sub') found a directory, not a regular file"
        );
        let v = check_guardrail(
            &Guardrail::RequireFile {
                path: "missing.json",
            },
            root,
        )
        .unwrap_err();
        assert_eq!((v.files, v.bytes, &v.error), (None, None, &None));
    }

    #[test]
    fn max_total_bytes() {
        let dir = workspace(&[("a.bin", "12345"), ("b/c.bin", "123456"), ("b/d.bin", "")]);
        let root = dir.path();
        let limit = |max_bytes| Guardrail::MaxTotalBytes { max_bytes };
        assert_eq!(check_guardrail(&limit(11), root), Ok(()));
        let v = check_guardrail(&limit(10), root).unwrap_err();
        assert_eq!(
            v.describe(),
            "max_total_bytes(10) found 11 bytes in 3 files"
        );
        assert_eq!((v.files, v.bytes), (Some(3), Some(11)));
        assert!(v.matched.is_empty());

        let one = workspace(&[("big", "123")]);
        assert_eq!(
            reason(limit(2), one.path()),
            "max_total_bytes(2) found 3 bytes in 1 file"
        );
    }

    #[test]
    fn max_files() {
        let dir = workspace(&[("a", ""), ("b/c", ""), ("b/d/e", "")]);
        let root = dir.path();
        fs::create_dir_all(root.join("empty/dirs")).unwrap(); // directories do not count
        let limit = |max_files| Guardrail::MaxFiles { max_files };
        assert_eq!(check_guardrail(&limit(3), root), Ok(()));
        let v = check_guardrail(&limit(2), root).unwrap_err();
        assert_eq!(v.describe(), "max_files(2) found 3 files");
        assert_eq!((v.files, v.bytes), (Some(3), None));
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_not_files_and_are_never_followed() {
        use std::os::unix::fs::symlink;
        let outside = workspace(&[("secret.tmp", "0123456789"), ("manifest.json", "{}")]);
        let dir = workspace(&[("real.tmp", "1")]);
        let root = dir.path();
        symlink(outside.path(), root.join("linked_dir")).unwrap();
        symlink(outside.path().join("secret.tmp"), root.join("link.tmp")).unwrap();
        symlink("real.tmp", root.join("manifest.json")).unwrap();

        // Neither the symlinked file nor anything behind the symlinked directory is seen.
        assert_eq!(glob_matches("**", root).unwrap(), ["real.tmp"]);
        assert_eq!(
            reason(
                Guardrail::ForbidGlob {
                    pattern: "**/*.tmp"
                },
                root
            ),
            "forbid_glob('**/*.tmp') matched 1 file: real.tmp"
        );
        assert_eq!(
            check_guardrail(&Guardrail::MaxFiles { max_files: 1 }, root),
            Ok(())
        );
        assert_eq!(
            check_guardrail(&Guardrail::MaxTotalBytes { max_bytes: 1 }, root),
            Ok(())
        );
        assert_eq!(
            reason(
                Guardrail::RequireFile {
                    path: "manifest.json"
                },
                root
            ),
            "require_file('manifest.json') found a symlink, not a regular file (guardrails do \
             not follow symlinks)"
        );
        assert_eq!(
            reason(
                Guardrail::RequireFile {
                    path: "linked_dir/manifest.json"
                },
                root
            ),
            "require_file('linked_dir/manifest.json') found a symlink at 'linked_dir' \
             (guardrails do not follow symlinks)"
        );
    }

    #[test]
    fn a_missing_root_is_reported_by_every_guardrail() {
        let root = Path::new("/nonexistent/perago/dir");
        let all = [
            Guardrail::RequireGlob {
                pattern: "*",
                min_count: 1,
            },
            Guardrail::ForbidGlob { pattern: "*" },
            Guardrail::RequireFile { path: "a" },
            Guardrail::MaxTotalBytes { max_bytes: 1 },
            Guardrail::MaxFiles { max_files: 1 },
        ];
        for g in all {
            let v = check_guardrail(&g, root).unwrap_err();
            let error = v.error.as_deref().unwrap_or_default();
            assert!(error.starts_with("/nonexistent/perago/dir: "), "{v:?}");
            assert_eq!(
                v.describe(),
                format!("{g} could not read the workspace: {error}")
            );
        }
    }

    #[test]
    fn a_root_that_is_a_file_is_reported() {
        let dir = workspace(&[("file", "")]);
        let root = dir.path().join("file");
        for g in [
            Guardrail::MaxFiles { max_files: 1 },
            Guardrail::RequireFile { path: "a" },
        ] {
            let v = check_guardrail(&g, &root).unwrap_err();
            assert_eq!(
                v.error,
                Some(format!("{}: not a directory", root.display())),
                "{g}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn an_unreadable_directory_is_a_violation_naming_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = workspace(&[("ok/a", ""), ("locked/b", "")]);
        let locked = dir.path().join("locked");
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
        // As root, permissions do not apply: then this test checks nothing.
        let readable = fs::read_dir(&locked).is_ok();
        let walked = check_guardrail(&Guardrail::MaxFiles { max_files: 100 }, dir.path());
        let looked_up = check_guardrail(&Guardrail::RequireFile { path: "locked/b" }, dir.path());
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
        if readable {
            assert_eq!((walked, looked_up), (Ok(()), Ok(())));
            return;
        }
        let v = walked.unwrap_err();
        assert_eq!(v.files, None);
        assert_eq!(
            v.error,
            Some(format!(
                "{}: Permission denied (os error 13)",
                locked.display()
            ))
        );
        assert_eq!(
            v.describe(),
            format!(
                "max_files(100) could not read the workspace: {}: Permission denied (os error 13)",
                locked.display()
            )
        );
        let v = looked_up.unwrap_err();
        assert_eq!(
            v.error,
            Some(format!(
                "{}: Permission denied (os error 13)",
                locked.join("b").display()
            ))
        );
    }

    #[test]
    fn a_malformed_guardrail_is_a_violation_not_a_check() {
        let dir = workspace(&[("a", "")]);
        // Built by hand, around the macro: refused rather than read outside the root.
        let v = check_guardrail(
            &Guardrail::RequireFile {
                path: "/etc/hostname",
            },
            dir.path(),
        )
        .unwrap_err();
        assert_eq!(
            v.describe(),
            "require_file('/etc/hostname') is malformed: path \"/etc/hostname\" must be relative \
             to the workspace root, with no leading `/`"
        );
        assert!(v.error.is_some());
        let v = check_guardrail(&Guardrail::ForbidGlob { pattern: "a/[" }, dir.path()).unwrap_err();
        assert_eq!(
            v.describe(),
            "forbid_glob('a/[') is malformed: invalid glob \"a/[\": unclosed character class; \
             missing ']'"
        );
    }

    /// Every check returns it in an `Err`: clippy's `result_large_err` draws the line at 128.
    #[test]
    fn a_violation_stays_small() {
        assert!(std::mem::size_of::<GuardrailViolation>() < 128);
    }

    #[test]
    fn violations_serialise_for_the_log() {
        let dir = workspace(&[("a.tmp", "")]);
        let v =
            check_guardrail(&Guardrail::ForbidGlob { pattern: "*.tmp" }, dir.path()).unwrap_err();
        assert_eq!(
            serde_json::to_value(&v).unwrap(),
            serde_json::json!({
                "guardrail": "forbid_glob('*.tmp')",
                "detail": "matched 1 file: a.tmp",
                "matched": ["a.tmp"],
                "files": 1,
                "bytes": null,
                "error": null,
            })
        );
    }
}
