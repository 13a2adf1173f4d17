//! Finds the line where the value at a violation's path starts in a document's text.
//!
//! One pass over the text finds every path at once: the wanted paths form a trie, and the
//! scanner only enters the containers on the way to one of them, skipping the rest. Nothing
//! here recurses, so the nesting depth of the text does not matter.

use std::collections::HashMap;

/// A step of a path: an object member or an array element.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Segment {
    Key(String),
    Index(usize),
}

/// For each path (as [`perago_schema::Path`] renders it), the 1-based line where its value starts
/// in `text`, which must be one valid JSON document. A path that is absent (a missing required
/// property) gets the line of its deepest ancestor that is present.
pub fn lines(text: &[u8], paths: &[&str]) -> Vec<usize> {
    let mut trie = Trie {
        nodes: vec![TrieNode::default()],
    };
    let ends: Vec<usize> = paths
        .iter()
        .map(|path| trie.insert(&parse(path).unwrap_or_default()))
        .collect();
    scan(text, &mut trie);
    ends.into_iter().map(|end| trie.line(end)).collect()
}

/// Parses a rendered path (`$`, `$.a.b[3]`, `$['odd key']`) back into its segments.
fn parse(path: &str) -> Option<Vec<Segment>> {
    let mut rest = path.strip_prefix('$')?;
    let mut segments = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            segments.push(Segment::Key(after[..end].to_owned()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix("['") {
            let (key, after) = quoted_key(after)?;
            segments.push(Segment::Key(key));
            rest = after;
        } else {
            let after = rest.strip_prefix('[')?;
            let end = after.find(']')?;
            segments.push(Segment::Index(after[..end].parse().ok()?));
            rest = &after[end + 1..];
        }
    }
    Some(segments)
}

/// Reads a bracketed key up to its closing `']`, undoing `\\`, `\'` and `\uXXXX`.
fn quoted_key(text: &str) -> Option<(String, &str)> {
    let mut key = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' => return Some((key, text[i + 1..].strip_prefix(']')?)),
            '\\' => match chars.next()?.1 {
                'u' => {
                    let hex: String = (0..4)
                        .filter_map(|_| chars.next().map(|(_, c)| c))
                        .collect();
                    key.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                escaped => key.push(escaped),
            },
            c => key.push(c),
        }
    }
    None
}

/// The wanted paths; node 0 is the root, `$`.
#[derive(Debug)]
struct Trie {
    nodes: Vec<TrieNode>,
}

#[derive(Debug, Default)]
struct TrieNode {
    parent: Option<usize>,
    children: HashMap<Segment, usize>,
    /// Where the value starts, once the scan has found it.
    line: Option<usize>,
}

impl Trie {
    /// Adds a path; returns its last node.
    fn insert(&mut self, segments: &[Segment]) -> usize {
        let mut node = 0;
        for segment in segments {
            node = match self.nodes[node].children.get(segment) {
                Some(&child) => child,
                None => {
                    self.nodes.push(TrieNode {
                        parent: Some(node),
                        ..TrieNode::default()
                    });
                    let child = self.nodes.len() - 1;
                    self.nodes[node].children.insert(segment.clone(), child);
                    child
                }
            };
        }
        node
    }

    fn child(&self, node: usize, segment: &Segment) -> Option<usize> {
        self.nodes[node].children.get(segment).copied()
    }

    /// The line of `node`, or of its nearest ancestor that was found; 1 when none was.
    fn line(&self, mut node: usize) -> usize {
        loop {
            match (self.nodes[node].line, self.nodes[node].parent) {
                (Some(line), _) => return line,
                (None, Some(parent)) => node = parent,
                (None, None) => return 1,
            }
        }
    }
}

/// A container being read on the way to a wanted path.
enum Frame {
    Object(usize),
    Array { node: usize, next: usize },
}

/// Records in `trie` the line of every wanted value in `text`. A repeated key is recorded at
/// its last occurrence, the one a parsed document keeps.
fn scan(text: &[u8], trie: &mut Trie) {
    let mut s = Scanner {
        text,
        pos: 0,
        line: 1,
    };
    let mut stack: Vec<Frame> = Vec::new();
    // The trie node of the value that starts next, `None` when no wanted path goes through it.
    let mut wanted = Some(0);
    loop {
        s.whitespace();
        if let Some(node) = wanted {
            trie.nodes[node].line = Some(s.line);
        }
        // Enter a container only when a wanted path goes on inside it.
        let inside = wanted.filter(|&node| !trie.nodes[node].children.is_empty());
        match (inside, s.peek()) {
            (Some(node), Some(b'{')) => {
                s.pos += 1;
                stack.push(Frame::Object(node));
            }
            (Some(node), Some(b'[')) => {
                s.pos += 1;
                stack.push(Frame::Array { node, next: 0 });
            }
            _ => s.skip_value(),
        }
        // Find where the next value starts: past separators and closed containers.
        wanted = loop {
            s.whitespace();
            let Some(frame) = stack.last_mut() else {
                return;
            };
            match s.peek() {
                None => return,
                Some(b',') => s.pos += 1,
                Some(b'}' | b']') => {
                    s.pos += 1;
                    stack.pop();
                }
                Some(_) => match frame {
                    Frame::Object(node) => {
                        let Some(key) = s.key() else { return };
                        break trie.child(*node, &Segment::Key(key));
                    }
                    Frame::Array { node, next } => {
                        *next += 1;
                        break trie.child(*node, &Segment::Index(*next - 1));
                    }
                },
            }
        };
    }
}

/// A cursor over JSON text that counts lines. In valid JSON a newline byte can only be
/// whitespace, so counting every `\n` passed is exact.
struct Scanner<'a> {
    text: &'a [u8],
    pos: usize,
    line: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn whitespace(&mut self) {
        while let Some(b) = self.peek() {
            match b {
                b'\n' => self.line += 1,
                b' ' | b'\t' | b'\r' => {}
                _ => return,
            }
            self.pos += 1;
        }
    }

    /// Reads a member's key and its `:`, leaving the cursor at the member's value.
    fn key(&mut self) -> Option<String> {
        let start = self.pos;
        self.skip_string();
        let key = serde_json::from_slice(&self.text[start..self.pos]).ok()?;
        self.whitespace();
        (self.peek() == Some(b':')).then(|| self.pos += 1)?;
        Some(key)
    }

    /// Skips a string, cursor on its opening quote.
    fn skip_string(&mut self) {
        self.pos += 1;
        while let Some(b) = self.peek() {
            self.pos += 1;
            match b {
                b'\\' => self.pos += 1,
                b'"' => return,
                _ => {}
            }
        }
    }

    /// Skips one value with a depth counter.
    fn skip_value(&mut self) {
        let mut depth = 0usize;
        while let Some(b) = self.peek() {
            match b {
                b'"' => self.skip_string(),
                b'{' | b'[' => {
                    depth += 1;
                    self.pos += 1;
                }
                b'}' | b']' if depth > 0 => {
                    depth -= 1;
                    self.pos += 1;
                }
                b'\n' if depth > 0 => {
                    self.line += 1;
                    self.pos += 1;
                }
                _ if depth > 0 => self.pos += 1,
                // The end of a number or literal.
                b',' | b':' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n' => return,
                _ => {
                    self.pos += 1;
                    continue;
                }
            }
            if depth == 0 {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{
  "a": {
    "b": [
      1,
      {"c": true},
      "x"
    ]
  },
  "odd key": "it's",
  "q\"uote": null,
  "it's\\": 1,
  "nl\nkey": [
    [], {},
    [[2]]
  ],
  "dup": 1,
  "dup":
    2
}"#;

    fn line(path: &str) -> usize {
        lines(DOC.as_bytes(), &[path])[0]
    }

    #[test]
    fn parses_rendered_paths_back() {
        use Segment::{Index, Key};
        let key = |k: &str| Key(k.to_owned());
        assert_eq!(parse("$"), Some(vec![]));
        assert_eq!(parse("$.a.b[3]"), Some(vec![key("a"), key("b"), Index(3)]));
        assert_eq!(
            parse("$['odd key'][0]._x"),
            Some(vec![key("odd key"), Index(0), key("_x")])
        );
        assert_eq!(parse(r"$['it\'s\\']"), Some(vec![key("it's\\")]));
        assert_eq!(parse(r"$['a\u000ab'].c"), Some(vec![key("a\nb"), key("c")]));
        assert_eq!(parse("$['é']"), Some(vec![key("é")]));
        assert_eq!(parse("$['']"), Some(vec![key("")]));
        assert_eq!(parse("a"), None);
        assert_eq!(parse("$[x]"), None);
        assert_eq!(parse("$['open"), None);
    }

    #[test]
    fn finds_the_line_of_each_value() {
        assert_eq!(line("$"), 1);
        assert_eq!(line("$.a"), 2);
        assert_eq!(line("$.a.b"), 3);
        assert_eq!(line("$.a.b[0]"), 4);
        assert_eq!(line("$.a.b[1]"), 5);
        assert_eq!(line("$.a.b[1].c"), 5);
        assert_eq!(line("$.a.b[2]"), 6);
        assert_eq!(line("$['odd key']"), 9);
        assert_eq!(line(r#"$['q"uote']"#), 10);
        assert_eq!(line(r"$['it\'s\\']"), 11);
        assert_eq!(line(r"$['nl\u000akey'][2][0][0]"), 14);
        assert_eq!(line(r"$['nl\u000akey'][1]"), 13);
    }

    #[test]
    fn a_repeated_key_is_found_at_its_last_occurrence() {
        assert_eq!(line("$.dup"), 18);
    }

    #[test]
    fn an_absent_path_falls_back_to_its_deepest_present_ancestor() {
        assert_eq!(line("$.a.missing"), 2);
        assert_eq!(line("$.a.b[7].c"), 3);
        assert_eq!(line("$.a.b[0].c"), 4);
        assert_eq!(line("not a path"), 1);
    }

    #[test]
    fn finds_many_paths_in_one_pass() {
        let found = lines(
            DOC.as_bytes(),
            &["$.a.b[2]", "$", "$.dup", "$.a.b[0]", "$.a.b[2]"],
        );
        assert_eq!(found, [6, 1, 18, 4, 6]);
    }

    #[test]
    fn skips_deep_unwanted_values_without_recursing() {
        let depth = 100_000;
        let text = format!(
            "{{\"deep\": {}{}, \"x\":\n1}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert_eq!(lines(text.as_bytes(), &["$.x"]), [2]);
    }

    #[test]
    fn no_paths_no_lines() {
        assert_eq!(lines(DOC.as_bytes(), &[]), Vec::<usize>::new());
    }

    #[test]
    fn finds_values_in_a_document_with_leading_whitespace() {
        assert_eq!(lines(b"\n\n  [0,\n 1]", &["$", "$[1]"]), [3, 4]);
    }
}
