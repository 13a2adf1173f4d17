//! The repository's texts cite only what it holds: every `.md` file a text names exists, every
//! `§` it cites is a heading of the page it refers to, every relative link of a Markdown file
//! resolves, and the manual's `docs/src/SUMMARY.md` lists every page; the README stays a README.
//!
//! A `§N` refers to the page named in the link it is the text of (`[Conductor §4.3](docs/src/reference/conductor.md)`),
//! else to the last `.md` file the text named before it (`docs/src/reference/conductor.md §4.3`,
//! or a module doc naming the page its bare `§`s refer to), else, in a Markdown file, to the file
//! itself. `RFC 3986 §5.2` cites a public standard, not a page of the repository.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the workspace root")
}

/// The repository's text files (tracked, or new and not ignored), relative to the root.
fn texts() -> Vec<(String, String)> {
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root())
        .output()
        .expect("git lists the repository's files");
    assert!(out.status.success(), "git ls-files failed");
    String::from_utf8(out.stdout)
        .expect("UTF-8 file names")
        .split('\0')
        .filter(|name| !name.is_empty())
        .filter_map(|name| {
            // Binary and deleted files are no texts.
            let text = std::fs::read_to_string(root().join(name)).ok()?;
            Some((name.to_owned(), text))
        })
        .collect()
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')
}

/// The `.md` file names `text` mentions, with their byte offsets; names inside URLs are left
/// out (they are not the repository's).
fn md_names(text: &str) -> Vec<(usize, &str)> {
    let mut names = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find(".md") {
        let end = from + found + 3;
        from = end;
        if text[end..].chars().next().is_some_and(is_path_char) {
            continue; // `.mdx`, `.md5`, a longer name
        }
        let start = text[..end - 3]
            .char_indices()
            .rev()
            .find(|(_, c)| !is_path_char(*c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let name = &text[start..end];
        let word_start = text[..start]
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace() || matches!(c, '(' | '<' | '`' | '"' | '['))
            .map_or(0, |(i, _)| i);
        if name.len() > 3 && !text[word_start..end].contains("://") {
            names.push((start, name));
        }
    }
    names
}

/// Markdown links `[text](target)`: the span of the text and the target without its anchor.
fn links(text: &str) -> Vec<(std::ops::Range<usize>, &str)> {
    let mut links = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find("](") {
        let close = from + found;
        from = close + 2;
        let Some(open) = text[..close].rfind('[') else {
            continue;
        };
        if text[open..close].contains(']') {
            continue;
        }
        let Some(len) = text[close + 2..].find(')') else {
            continue;
        };
        let target = &text[close + 2..close + 2 + len];
        let target = target.split('#').next().unwrap_or_default();
        links.push((open..close, target.trim()));
    }
    links
}

/// Whether `cited` names a file: beside the citing file, or from the repository's root.
fn resolve(citing: &str, cited: &str) -> Option<PathBuf> {
    let dir = root().join(citing).parent().map(Path::to_path_buf)?;
    [dir.join(cited), root().join(cited)]
        .into_iter()
        .find(|p| p.exists())
        .and_then(|p| p.canonicalize().ok())
}

/// The section numbers a page's headings give (`## 4.3 Update semantics` gives `4.3`).
fn headings(page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page).unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with('#'))
        .filter_map(|l| {
            let title = l.trim_start_matches('#').trim_start();
            let number: String = title
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let number = number.trim_end_matches('.');
            (!number.is_empty()).then(|| number.to_owned())
        })
        .collect()
}

/// The section number a `§` at `at` cites, or `None` when the sign is not followed by one
/// (the sign itself, talked about).
fn section_at(text: &str, at: usize) -> Option<&str> {
    let rest = &text[at + '§'.len_utf8()..];
    let len = rest
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map_or(rest.len(), |(i, _)| i);
    let number = rest[..len].trim_end_matches('.');
    number
        .starts_with(|c: char| c.is_ascii_digit())
        .then_some(number)
}

/// Whether the `§` at `at` follows `RFC <number> `: a public standard.
fn cites_an_rfc(text: &str, at: usize) -> bool {
    let before = text[..at].trim_end();
    let digits = before.trim_end_matches(|c: char| c.is_ascii_digit());
    digits.len() < before.len() && digits.trim_end().ends_with("RFC")
}

#[test]
fn every_md_file_a_text_names_exists() {
    let mut missing = Vec::new();
    for (file, text) in texts() {
        for (at, name) in md_names(&text) {
            let in_link = file.ends_with(".md")
                && links(&text)
                    .iter()
                    .any(|(span, target)| *target == name && span.end + 2 == at);
            let found = if in_link {
                // A Markdown link resolves beside its file, as a renderer reads it.
                let dir = root().join(&file);
                dir.parent().is_some_and(|d| d.join(name).exists())
            } else {
                resolve(&file, name).is_some()
            };
            if !found {
                let line = text[..at].matches('\n').count() + 1;
                missing.push(format!("{file}:{line}: {name}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "texts name .md files that are not in the repository (name them by their path from \
         the root, or beside the citing file):\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_section_a_text_cites_is_a_heading_of_its_page() {
    let mut wrong = Vec::new();
    for (file, text) in texts() {
        if !text.contains('§') {
            continue;
        }
        let names = md_names(&text);
        let links = links(&text);
        for (at, _) in text.match_indices('§') {
            let Some(number) = section_at(&text, at) else {
                continue;
            };
            if cites_an_rfc(&text, at) {
                continue;
            }
            let line = text[..at].matches('\n').count() + 1;
            let page = links
                .iter()
                .find(|(span, target)| span.contains(&at) && target.ends_with(".md"))
                .map(|(_, target)| *target)
                .or_else(|| names.iter().rev().find(|(i, _)| *i < at).map(|(_, n)| *n))
                .or_else(|| file.ends_with(".md").then_some(file.as_str()));
            let Some(page) = page else {
                wrong.push(format!(
                    "{file}:{line}: §{number} names no page (name it, e.g. \
                     `docs/src/reference/conductor.md §{number}`, or in the module doc)"
                ));
                continue;
            };
            let Some(path) = resolve(&file, page) else {
                wrong.push(format!(
                    "{file}:{line}: §{number} of {page}, which is not here"
                ));
                continue;
            };
            if !headings(&path).iter().any(|h| h == number) {
                wrong.push(format!("{file}:{line}: §{number} is no heading of {page}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "texts cite sections that are not in the repository:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_relative_link_of_a_markdown_file_resolves() {
    let mut broken = Vec::new();
    for (file, text) in texts().into_iter().filter(|(f, _)| f.ends_with(".md")) {
        let dir = root().join(&file).parent().unwrap().to_path_buf();
        for (span, target) in links(&text) {
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            if !dir.join(target).exists() {
                let line = text[..span.start].matches('\n').count() + 1;
                broken.push(format!("{file}:{line}: {target}"));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_manual_lists_every_page() {
    let summary = std::fs::read_to_string(root().join("docs/src/SUMMARY.md")).unwrap();
    let listed: Vec<&str> = links(&summary).into_iter().map(|(_, t)| t).collect();
    for (file, _) in texts() {
        let Some(page) = file.strip_prefix("docs/src/") else {
            continue;
        };
        if page.ends_with(".md") && file != "docs/src/SUMMARY.md" {
            assert!(
                listed.contains(&page),
                "docs/src/SUMMARY.md does not list {page}"
            );
        }
    }
}

#[test]
fn the_readme_is_a_readme_with_the_two_commands_first() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; the manual is docs/"
    );
    let first_block = readme
        .split("```")
        .nth(1)
        .expect("README.md has a code block");
    for command in [
        "cargo run --locked -p perago-example -- run validate_song --input crates/perago-example/inputs/validate_song.json",
        "cargo test --workspace --locked",
    ] {
        assert!(
            first_block.contains(command),
            "README.md's first code block gives `{command}`"
        );
    }
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.lines()
            .any(|l| l.trim() == "cargo test --workspace --locked"),
        ".ci/run runs the README's test command"
    );
}

#[test]
fn the_checks_see_what_they_must() {
    // The readers above, on texts whose answers are known, so that a check that finds
    // nothing cannot pass by reading nothing.
    let text = "see `docs/src/reference/lakefs.md` §3.16 and [Conductor §4.3](docs/src/reference/conductor.md), \
                https://example.com/a.md, RFC 3986 §5.2, the sign § alone, notes.mdx";
    let names: Vec<&str> = md_names(text).into_iter().map(|(_, n)| n).collect();
    assert_eq!(
        names,
        [
            "docs/src/reference/lakefs.md",
            "docs/src/reference/conductor.md"
        ]
    );
    let link = links(text);
    assert_eq!(link.len(), 1);
    assert_eq!(link[0].1, "docs/src/reference/conductor.md");
    let sections: Vec<&str> = text
        .match_indices('§')
        .filter_map(|(at, _)| section_at(text, at))
        .collect();
    assert_eq!(sections, ["3.16", "4.3", "5.2"]);
    let signs: Vec<usize> = text.match_indices('§').map(|(at, _)| at).collect();
    assert!(!cites_an_rfc(text, signs[0]) && cites_an_rfc(text, signs[2]));
    let page = root().join("docs/src/reference/conductor.md");
    let numbers = headings(&page);
    for n in ["0", "1", "2.1", "2.5", "3", "4.3", "4.6"] {
        assert!(
            numbers.iter().any(|h| h == n),
            "docs/src/reference/conductor.md has §{n}"
        );
    }
    assert!(texts().iter().any(|(f, _)| f == "README.md"));
}
