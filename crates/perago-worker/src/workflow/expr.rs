//! Conductor's `${...}` expressions in a WorkflowDef's strings, read as the server reads them
//! (`docs/src/reference/conductor.md` §10.2): a string that is exactly one `${...}` gives the
//! value its path names, typed; expressions inside other text give text; `$${` is a literal
//! `${`. The body is a JSONPath over `{workflow: {...}, <taskReferenceName>: {...}}`.

/// What a string of `inputParameters` gives the task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Text {
    /// No expression: the string itself.
    Literal,
    /// Exactly one expression: the value it names.
    Whole(Expr),
    /// Expressions inside other text: a string.
    Embedded(Vec<Expr>),
}

/// One `${...}` expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expr {
    /// The body as written, without `${` and `}`.
    pub source: String,
    /// The path it names, when it is one perago can follow.
    pub path: Result<Path, Unfollowed>,
}

/// Why an expression's path is not followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unfollowed {
    /// A part computed at run time: `${map.${key}}`, a filter `[?(...)]`, a deep scan `..`,
    /// a function.
    Computed(String),
    /// Not a path at all.
    Malformed(String),
}

/// A path: its root and the steps after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    /// `workflow`, or a `taskReferenceName`.
    pub root: String,
    pub steps: Vec<Seg>,
}

/// A step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// `.name` or `['name']`.
    Key(String),
    /// `[3]`.
    Index(usize),
    /// `[*]` or `.*`: every item (an indefinite path: a list).
    Wildcard,
}

/// Steps as JSONPath writes them after a root: `.a[0]['odd key'][*]`.
pub fn render_steps(steps: &[Seg]) -> String {
    let mut out = String::new();
    for s in steps {
        match s {
            Seg::Key(k)
                if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !k.is_empty() =>
            {
                out.push('.');
                out.push_str(k);
            }
            Seg::Key(k) => out.push_str(&format!("['{k}']")),
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
            Seg::Wildcard => out.push_str("[*]"),
        }
    }
    out
}

/// Reads the expressions of a string.
pub fn parse(text: &str) -> Text {
    let mut exprs = Vec::new();
    let mut literal = false;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if text[i..].starts_with("$${") {
            literal = true;
            i += 3;
            continue;
        }
        if text[i..].starts_with("${") {
            let body_start = i + 2;
            match closing(text, body_start) {
                Some(end) => {
                    exprs.push((i, end + 1, expression(&text[body_start..end])));
                    i = end + 1;
                }
                None => {
                    let source = text[body_start..].to_owned();
                    exprs.push((
                        i,
                        text.len(),
                        Expr {
                            path: Err(Unfollowed::Malformed("a `${` without its `}`".into())),
                            source,
                        },
                    ));
                    i = text.len();
                }
            }
            continue;
        }
        literal = true;
        i += text[i..].chars().next().map_or(1, char::len_utf8);
    }
    match exprs.as_slice() {
        [] => Text::Literal,
        [(0, end, e)] if *end == text.len() && !literal => Text::Whole(e.clone()),
        _ => Text::Embedded(exprs.into_iter().map(|(_, _, e)| e).collect()),
    }
}

/// The index of the `}` that closes a `${` whose body starts at `start`, inner `${...}`
/// included.
fn closing(text: &str, start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let bytes = text.as_bytes();
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 2;
                continue;
            }
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

fn expression(body: &str) -> Expr {
    let source = body.to_owned();
    let path = if body.contains("${") {
        Err(Unfollowed::Computed(
            "a part of it is another expression, known only at run time".into(),
        ))
    } else {
        path(body.trim())
    };
    Expr { source, path }
}

/// Reads a JSONPath: `$.`-prefixed or not, dot members, bracketed names, indices, `[*]`.
fn path(body: &str) -> Result<Path, Unfollowed> {
    let body = body.strip_prefix("$.").unwrap_or(body);
    if body.contains("..") {
        return Err(Unfollowed::Computed("a deep scan (`..`)".into()));
    }
    let mut chars = body.char_indices().peekable();
    let mut root = String::new();
    while let Some(&(_, c)) = chars.peek() {
        if c == '.' || c == '[' {
            break;
        }
        root.push(c);
        chars.next();
    }
    if root.is_empty() {
        return Err(Unfollowed::Malformed(format!(
            "{body:?} names no task or `workflow`"
        )));
    }
    let mut steps = Vec::new();
    while let Some((at, c)) = chars.next() {
        match c {
            '.' => {
                let mut name = String::new();
                while let Some(&(_, c)) = chars.peek() {
                    if c == '.' || c == '[' {
                        break;
                    }
                    name.push(c);
                    chars.next();
                }
                if name.ends_with(')') {
                    return Err(Unfollowed::Computed(format!("the function `{name}`")));
                }
                match name.as_str() {
                    "" => {
                        return Err(Unfollowed::Malformed(format!(
                            "an empty member name at {at}"
                        )));
                    }
                    "*" => steps.push(Seg::Wildcard),
                    _ => steps.push(Seg::Key(name)),
                }
            }
            '[' => {
                let rest = &body[at + 1..];
                let end = rest
                    .find(']')
                    .ok_or_else(|| Unfollowed::Malformed("a `[` without its `]`".into()))?;
                let inner = rest[..end].trim();
                for _ in 0..=end {
                    chars.next();
                }
                if inner == "*" {
                    steps.push(Seg::Wildcard);
                } else if let Ok(i) = inner.parse::<usize>() {
                    steps.push(Seg::Index(i));
                } else if let Some(name) = quoted(inner) {
                    steps.push(Seg::Key(name));
                } else {
                    return Err(Unfollowed::Computed(format!("the selector `[{inner}]`")));
                }
            }
            _ => return Err(Unfollowed::Malformed(format!("unexpected {c:?} at {at}"))),
        }
    }
    Ok(Path { root, steps })
}

fn quoted(inner: &str) -> Option<String> {
    let q = inner.chars().next()?;
    if (q == '\'' || q == '"') && inner.len() >= 2 && inner.ends_with(q) {
        Some(inner[1..inner.len() - 1].to_owned())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(text: &str) -> Path {
        match parse(text) {
            Text::Whole(e) => e.path.unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_whole_expression_names_a_typed_value() {
        let p = whole("${validate.output.result.valid}");
        assert_eq!(p.root, "validate");
        assert_eq!(
            p.steps,
            [
                Seg::Key("output".into()),
                Seg::Key("result".into()),
                Seg::Key("valid".into())
            ]
        );
        let p = whole("${$.ref.output.items[0]['odd key'][*]}");
        assert_eq!(render_steps(&p.steps), ".output.items[0]['odd key'][*]");
        assert_eq!(whole("${workflow.input.song_id}").root, "workflow");
    }

    #[test]
    fn text_around_an_expression_makes_a_string() {
        assert!(matches!(parse("song ${workflow.input.id}"), Text::Embedded(e) if e.len() == 1));
        assert!(matches!(parse("${a.output.x}${b.output.y}"), Text::Embedded(e) if e.len() == 2));
        assert_eq!(parse("plain"), Text::Literal);
        assert_eq!(parse("$${not.an.expression}"), Text::Literal);
    }

    #[test]
    fn computed_paths_are_not_followed() {
        for text in [
            "${map.${key}}",
            "${a.output..x}",
            "${a.output.items[?(@.x)]}",
            "${a.output.length()}",
        ] {
            match parse(text) {
                Text::Whole(e) => assert!(matches!(e.path, Err(Unfollowed::Computed(_))), "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        match parse("${unclosed") {
            Text::Whole(e) => assert!(matches!(e.path, Err(Unfollowed::Malformed(_)))),
            other => panic!("{other:?}"),
        }
    }
}
