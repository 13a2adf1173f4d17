//! JSONPath-style instance paths, built on the stack while validating and rendered only when a
//! violation is recorded, so the valid case allocates nothing for paths; and the escaping of a
//! JSON Pointer token, which schema locations are written with.

use std::fmt::{self, Write};

/// A location in a JSON document: `$`, `$.summary`, `$.files_changed[1]`, `$['odd key']`.
#[derive(Debug, Clone, Copy)]
pub enum Path<'a> {
    /// The document itself, `$`.
    Root,
    /// A member of an object.
    Key(&'a Path<'a>, &'a str),
    /// An element of an array.
    Index(&'a Path<'a>, usize),
}

impl<'a> Path<'a> {
    /// The path of `key` inside the object at `self`.
    pub fn key<'b>(&'b self, key: &'b str) -> Path<'b> {
        Path::Key(self, key)
    }

    /// The path of element `index` inside the array at `self`.
    pub fn index(&'a self, index: usize) -> Path<'a> {
        Path::Index(self, index)
    }

    /// Renders the path; identifiers use dot form, every other key bracket form with quotes.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(16);
        self.write_to(&mut out);
        out
    }

    fn write_to(&self, out: &mut String) {
        match self {
            Path::Root => out.push('$'),
            Path::Key(parent, key) => {
                parent.write_to(out);
                push_key(out, key);
            }
            Path::Index(parent, index) => {
                parent.write_to(out);
                // Writing to a String cannot fail.
                let _ = write!(out, "[{index}]");
            }
        }
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

/// Appends `.key` or `['key']` to a rendered path.
pub fn push_key(out: &mut String, key: &str) {
    if is_identifier(key) {
        out.push('.');
        out.push_str(key);
        return;
    }
    out.push_str("['");
    for c in key.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push_str("']");
}

/// `[A-Za-z_][A-Za-z0-9_]*`: the keys written in dot form.
pub fn is_identifier(key: &str) -> bool {
    let mut bytes = key.bytes();
    matches!(bytes.next(), Some(b'A'..=b'Z' | b'a'..=b'z' | b'_'))
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Escapes one JSON Pointer token (RFC 6901: `~` as `~0`, `/` as `~1`).
pub fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The key a JSON Pointer token names: [`pointer_token`] undone.
pub fn unescape_pointer_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_dot_index_and_bracket_forms() {
        let root = Path::Root;
        assert_eq!(root.render(), "$");
        let files = root.key("files_changed");
        assert_eq!(files.index(1).render(), "$.files_changed[1]");
        assert_eq!(root.key("file name").render(), "$['file name']");
        assert_eq!(root.key("it's\\").render(), r"$['it\'s\\']");
        assert_eq!(root.key("1st").render(), "$['1st']");
        assert_eq!(root.key("").render(), "$['']");
        assert_eq!(root.key("a\nb").render(), r"$['a\u000ab']");
        assert_eq!(root.key("é").render(), "$['é']");
    }
}
