//! JSON Schema's `pattern` dialect, ECMA-262 regular expressions in Unicode mode, translated to
//! the syntax of the `regex` crate, which matches in time linear in the input: no string can
//! stall a validator. What only a backtracking engine can run (backreferences, lookaround) is
//! refused with an error that says so, but for lookaheads that open a pattern at its `^`
//! (Pydantic's `Decimal` pattern, `^(?!^[-+.]*$)…`), which [`compile`] runs as searches of
//! their own; everything else keeps its ECMA-262 meaning where the two dialects differ:
//!
//! - `\d`, `\w`, `\b` are ASCII in ECMA-262 (Unicode in `regex`), and `\s` is ECMA-262's
//!   WhiteSpace and LineTerminator set: all written out as explicit classes;
//! - `.` matches anything but the four line terminators, `^` and `$` only the input's ends;
//! - `\p{…}` takes only the names ECMA-262 allows (`regex` matches names loosely);
//! - a lone surrogate (`\uD800`) matches no character of a Rust string: an empty class;
//! - literals are written as code point escapes, so nothing is special to `regex` that was
//!   literal in the source (`&&`, `--`, `~~` or `[` inside a class);
//! - groups do not capture, as only the verdict counts.
//!
//! The translator is one left-to-right pass with an explicit stack of open groups: no
//! recursion, so no pattern can overflow the stack.
//!
//! ```
//! let digits = perago_regex::compile(r"^\d{3}$").unwrap();
//! assert!(digits.is_match("123"));
//! assert!(!digits.is_match("١٢٣")); // `\d` is ASCII in ECMA-262
//! assert!(perago_regex::compile(r"(a)\1").is_err()); // backreferences need backtracking
//! ```

use regex::{Regex, RegexBuilder};
use std::fmt::Write;
use std::sync::LazyLock;

/// Why a `pattern` is refused; the `Display` completes "`pattern`: …" in a lint message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// Not ECMA-262 syntax in Unicode mode.
    #[error("not a valid ECMA-262 regular expression (Unicode mode): {0}")]
    Invalid(String),
    /// Valid, but only a backtracking engine, which some input can stall, can run it.
    #[error(
        "{0} needs a backtracking engine, which a hostile string can stall; perago matches \
         patterns in linear time and refuses backreferences and lookaround (but lookaheads \
         that open the pattern right after its `^`): rewrite the pattern without them"
    )]
    Backtracking(String),
    /// Valid, but beyond what perago's engine expresses; the message says what.
    #[error("{0}")]
    Unsupported(String),
    /// Compiles to more than perago's size limit.
    #[error(
        "compiles to more than {} MiB, perago's limit for one pattern, so that no schema can \
         exhaust a worker's memory: lower its repetition counts, or bound lengths with \
         `minLength`/`maxLength`",
        SIZE_LIMIT >> 20
    )]
    TooLarge,
}

/// The compiled-program limit of one pattern. `regex`'s own default: room for `.{1,1000}` or
/// `\p{L}{1,50}`, while `a{10000000}` is refused instead of taking gigabytes.
pub const SIZE_LIMIT: usize = 10 << 20;
/// The cache limit of the lazy DFA a match runs in (`regex`'s default). Beyond it the engine
/// falls back to slower but still linear-time matching, never to more memory.
const DFA_SIZE_LIMIT: usize = 2 << 20;
/// Groups nest at most this deep, well inside `regex`'s own nesting limit of 250 (a group, its
/// repetition and a class count one level each).
pub const MAX_DEPTH: usize = 64;

/// A compiled pattern: one `regex` program, and the lookaheads it opens with, if any.
#[derive(Debug, Clone)]
pub struct Matcher {
    regex: Regex,
    /// `^(?=A)`: each must match at the start too.
    required: Vec<Regex>,
    /// `^(?!A)`: none may match at the start (Pydantic's `Decimal` pattern opens so).
    excluded: Vec<Regex>,
}

impl Matcher {
    /// True when the pattern matches anywhere in `s` (JSON Schema's unanchored search).
    #[inline]
    pub fn is_match(&self, s: &str) -> bool {
        self.regex.is_match(s)
            && self.required.iter().all(|r| r.is_match(s))
            && !self.excluded.iter().any(|r| r.is_match(s))
    }
}

/// Translates `source` and compiles it within the size limits. A pattern that opens with
/// lookaheads at its start anchor, `^(?!A)(?=B)R` with no top-level `|` in `R`, is matched
/// in linear time too, as three searches: `^R`, and `^(?:A)` must not match, `^(?:B)` must
/// (at the input's start, the one place `^` lets the lookaheads be tried).
pub fn compile(source: &str) -> Result<Matcher, PatternError> {
    let chars: Vec<char> = source.chars().collect();
    let mut required = Vec::new();
    let mut excluded = Vec::new();
    let mut at = 1;
    if chars.first() == Some(&'^') {
        while chars.get(at) == Some(&'(')
            && chars.get(at + 1) == Some(&'?')
            && matches!(chars.get(at + 2), Some('!' | '='))
            && let Some(end) = group_end(&chars, at)
        {
            let body: String = chars[at + 3..end].iter().collect();
            let lookahead = compile_plain(&format!("^(?:{body})"))?;
            match chars[at + 2] {
                '!' => excluded.push(lookahead),
                _ => required.push(lookahead),
            }
            at = end + 1;
        }
    }
    if at > 1 {
        if has_top_level_bar(&chars[at..]) {
            return Err(PatternError::Unsupported(
                "the lookahead at character 2 opens the pattern, but a `|` outside every group \
                 follows it, so it would apply to the first alternative only: perago matches a \
                 pattern's opening lookaheads before one alternative, so group them, as in \
                 `^(?!A)(?:B|C)`"
                    .to_owned(),
            ));
        }
        let rest: String = chars[at..].iter().collect();
        return Ok(Matcher {
            regex: compile_plain(&format!("^{rest}"))?,
            required,
            excluded,
        });
    }
    Ok(Matcher {
        regex: compile_plain(source)?,
        required: Vec::new(),
        excluded: Vec::new(),
    })
}

/// The index of the `)` that closes the group opened at `open`, skipping escapes and classes.
fn group_end(chars: &[char], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '[' => i = class_end(chars, i)?,
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the `]` that closes the class opened at `open`.
fn class_end(chars: &[char], open: usize) -> Option<usize> {
    let mut i = open + 1;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            ']' => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// True when `chars` has a `|` outside every group and class (or is not balanced).
fn has_top_level_bar(chars: &[char]) -> bool {
    let mut depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '[' => match class_end(chars, i) {
                Some(end) => i = end,
                None => return true,
            },
            '(' => depth += 1,
            ')' if depth == 0 => return true,
            ')' => depth -= 1,
            '|' if depth == 0 => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// Translates `source` (no lookaround) and compiles it within the size limits.
fn compile_plain(source: &str) -> Result<Regex, PatternError> {
    let translated = translate(source)?;
    RegexBuilder::new(&translated)
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(DFA_SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => PatternError::TooLarge,
            // Every construct the translator emits is valid `regex` syntax; should a future
            // version disagree, the pattern is refused, not mismatched.
            e => PatternError::Unsupported(format!(
                "its translation `{translated}` is refused by the `regex` crate: {e}"
            )),
        })
}

/// The `regex` syntax of the ECMA-262 pattern `source`.
pub fn translate(source: &str) -> Result<String, PatternError> {
    let mut t = Translator {
        chars: source.chars().collect(),
        pos: 0,
        out: String::with_capacity(source.len() * 2),
        open: vec![Open {
            id: 0,
            alternative: 0,
            at: 0,
        }],
        groups: 0,
        names: Vec::new(),
        quantifiable: false,
    };
    t.run()?;
    Ok(t.out)
}

/// Everything but the four line terminators: ECMA-262 `.` without the `s` flag.
const DOT: &str = r"[^\x{A}\x{D}\x{2028}\x{2029}]";
/// A class no character is in: what a lone surrogate, `[]` or `\p{Cs}` match.
const NOTHING: &str = r"[^\x{0}-\x{10FFFF}]";
/// Every character: `[^]`.
const ANYTHING: &str = r"[\x{0}-\x{10FFFF}]";
const MAX_CODE_POINT: u32 = 0x10_FFFF;
const SURROGATES: (u32, u32) = (0xD800, 0xDFFF);

const DIGIT: &[(u32, u32)] = &[(0x30, 0x39)];
const WORD: &[(u32, u32)] = &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];
/// ECMA-262 WhiteSpace (TAB, VT, FF, ZWNBSP, every `Zs`) and LineTerminator (LF, CR, LS, PS).
const SPACE: &[(u32, u32)] = &[
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
];

/// ECMA-262's General_Category values (its table of value aliases), each spelling it takes,
/// the long name (which `regex` is given) first.
const GENERAL_CATEGORIES: &[&[&str]] = &[
    &["Cased_Letter", "LC"],
    &["Close_Punctuation", "Pe"],
    &["Connector_Punctuation", "Pc"],
    &["Control", "Cc", "cntrl"],
    &["Currency_Symbol", "Sc"],
    &["Dash_Punctuation", "Pd"],
    &["Decimal_Number", "Nd", "digit"],
    &["Enclosing_Mark", "Me"],
    &["Final_Punctuation", "Pf"],
    &["Format", "Cf"],
    &["Initial_Punctuation", "Pi"],
    &["Letter", "L"],
    &["Letter_Number", "Nl"],
    &["Line_Separator", "Zl"],
    &["Lowercase_Letter", "Ll"],
    &["Mark", "M", "Combining_Mark"],
    &["Math_Symbol", "Sm"],
    &["Modifier_Letter", "Lm"],
    &["Modifier_Symbol", "Sk"],
    &["Nonspacing_Mark", "Mn"],
    &["Number", "N"],
    &["Open_Punctuation", "Ps"],
    &["Other", "C"],
    &["Other_Letter", "Lo"],
    &["Other_Number", "No"],
    &["Other_Punctuation", "Po"],
    &["Other_Symbol", "So"],
    &["Paragraph_Separator", "Zp"],
    &["Private_Use", "Co"],
    &["Punctuation", "P", "punct"],
    &["Separator", "Z"],
    &["Space_Separator", "Zs"],
    &["Spacing_Mark", "Mc"],
    &["Surrogate", "Cs"],
    &["Symbol", "S"],
    &["Titlecase_Letter", "Lt"],
    &["Unassigned", "Cn"],
    &["Uppercase_Letter", "Lu"],
];

/// ECMA-262's binary Unicode properties, each spelling it takes, the long name first.
const BINARY_PROPERTIES: &[&[&str]] = &[
    &["ASCII"],
    &["ASCII_Hex_Digit", "AHex"],
    &["Alphabetic", "Alpha"],
    &["Any"],
    &["Assigned"],
    &["Bidi_Control", "Bidi_C"],
    &["Bidi_Mirrored", "Bidi_M"],
    &["Case_Ignorable", "CI"],
    &["Cased"],
    &["Changes_When_Casefolded", "CWCF"],
    &["Changes_When_Casemapped", "CWCM"],
    &["Changes_When_Lowercased", "CWL"],
    &["Changes_When_NFKC_Casefolded", "CWKCF"],
    &["Changes_When_Titlecased", "CWT"],
    &["Changes_When_Uppercased", "CWU"],
    &["Dash"],
    &["Default_Ignorable_Code_Point", "DI"],
    &["Deprecated", "Dep"],
    &["Diacritic", "Dia"],
    &["Emoji"],
    &["Emoji_Component", "EComp"],
    &["Emoji_Modifier", "EMod"],
    &["Emoji_Modifier_Base", "EBase"],
    &["Emoji_Presentation", "EPres"],
    &["Extended_Pictographic", "ExtPict"],
    &["Extender", "Ext"],
    &["Grapheme_Base", "Gr_Base"],
    &["Grapheme_Extend", "Gr_Ext"],
    &["Hex_Digit", "Hex"],
    &["IDS_Binary_Operator", "IDSB"],
    &["IDS_Trinary_Operator", "IDST"],
    &["ID_Continue", "IDC"],
    &["ID_Start", "IDS"],
    &["Ideographic", "Ideo"],
    &["Join_Control", "Join_C"],
    &["Logical_Order_Exception", "LOE"],
    &["Lowercase", "Lower"],
    &["Math"],
    &["Noncharacter_Code_Point", "NChar"],
    &["Pattern_Syntax", "Pat_Syn"],
    &["Pattern_White_Space", "Pat_WS"],
    &["Quotation_Mark", "QMark"],
    &["Radical"],
    &["Regional_Indicator", "RI"],
    &["Sentence_Terminal", "STerm"],
    &["Soft_Dotted", "SD"],
    &["Terminal_Punctuation", "Term"],
    &["Unified_Ideograph", "UIdeo"],
    &["Uppercase", "Upper"],
    &["Variation_Selector", "VS"],
    &["White_Space", "space"],
    &["XID_Continue", "XIDC"],
    &["XID_Start", "XIDS"],
];

/// A group name: an identifier with `$`, as ECMA-262's RegExpIdentifierName.
static GROUP_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\A[\p{ID_Start}$_][\p{ID_Continue}$\x{200C}\x{200D}]*\z").expect("a valid regex")
});

/// An open group (or the whole pattern, `id` 0).
struct Open {
    id: usize,
    /// Which of its `|` alternatives is being read.
    alternative: usize,
    /// Where it starts, for an unclosed group.
    at: usize,
}

/// One item of a character class.
enum Item {
    /// Code points `lo..=hi`; surrogates among them are dropped on output.
    Range(u32, u32),
    /// A Unicode property, `regex` syntax without the `\p{` `}`.
    Property { name: String, negated: bool },
}

/// One atom of a character class: what may bound a range, or not.
enum ClassAtom {
    Char(u32),
    Set(Vec<Item>),
}

struct Translator {
    chars: Vec<char>,
    pos: usize,
    out: String,
    /// The open groups, the whole pattern first.
    open: Vec<Open>,
    /// Groups opened so far, for their ids.
    groups: usize,
    /// Every group name, with the `(id, alternative)` of each group around it.
    names: Vec<(String, Vec<(usize, usize)>)>,
    /// Whether the last thing read may take a quantifier.
    quantifiable: bool,
}

/// `Invalid`, naming where (a 1-based character position).
fn invalid(at: usize, what: impl std::fmt::Display) -> PatternError {
    PatternError::Invalid(format!("{what} (at character {})", at + 1))
}

impl Translator {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        let hit = self.peek() == Some(c);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn eat_str(&mut self, s: &str) -> bool {
        let n = s.chars().count();
        let hit = self.chars.len() >= self.pos + n
            && s.chars().zip(&self.chars[self.pos..]).all(|(a, b)| a == *b);
        if hit {
            self.pos += n;
        }
        hit
    }

    /// The source text from `from` to the current position, for messages.
    fn text(&self, from: usize) -> String {
        self.chars[from..self.pos].iter().collect()
    }

    /// Emits an atom: something a quantifier may follow.
    fn atom(&mut self, regex: &str) {
        self.out.push_str(regex);
        self.quantifiable = true;
    }

    /// Emits what ECMA-262 (Unicode mode) lets no quantifier follow: an assertion, `|`, `(?:`.
    fn syntax(&mut self, regex: &str) {
        self.out.push_str(regex);
        self.quantifiable = false;
    }

    fn run(&mut self) -> Result<(), PatternError> {
        while let Some(c) = self.bump() {
            let at = self.pos - 1;
            match c {
                '|' => {
                    if let Some(open) = self.open.last_mut() {
                        open.alternative += 1;
                    }
                    self.syntax("|");
                }
                '(' => self.group(at)?,
                ')' => {
                    if self.open.len() == 1 {
                        return Err(invalid(at, "unmatched `)`: write `\\)` for a literal"));
                    }
                    self.open.pop();
                    self.atom(")");
                }
                '^' => self.syntax(r"\A"),
                '$' => self.syntax(r"\z"),
                '.' => self.atom(DOT),
                '[' => {
                    let class = self.class(at)?;
                    self.atom(&class);
                }
                '*' | '+' | '?' => self.quantifier(at, &c.to_string())?,
                '{' => match self.braces(at)? {
                    Some(q) => self.quantifier(at, &q)?,
                    None => {
                        return Err(invalid(
                            at,
                            "lone `{` (not a quantifier `{n}`, `{n,}` or `{n,m}`): write `\\{` for a literal",
                        ));
                    }
                },
                '}' | ']' => {
                    return Err(invalid(
                        at,
                        format!("lone `{c}`: write `\\{c}` for a literal in Unicode mode"),
                    ));
                }
                '\\' => self.atom_escape(at)?,
                c => self.literal(c as u32),
            }
        }
        match self.open.get(1) {
            Some(open) => Err(invalid(open.at, "unclosed group `(`")),
            None => Ok(()),
        }
    }

    fn literal(&mut self, cp: u32) {
        match char::from_u32(cp) {
            Some(_) => {
                let mut s = String::new();
                push_code_point(&mut s, cp);
                self.atom(&s);
            }
            // A lone surrogate: no character of a Rust string is one.
            None => self.atom(NOTHING),
        }
    }

    /// After `*`, `+`, `?` or `{…}` (given as `text`): the quantifier and its lazy `?`.
    fn quantifier(&mut self, at: usize, text: &str) -> Result<(), PatternError> {
        if !self.quantifiable {
            return Err(invalid(at, format!("nothing to repeat before `{text}`")));
        }
        self.out.push_str(text);
        if self.eat('?') {
            self.out.push('?');
        }
        self.quantifiable = false;
        Ok(())
    }

    /// After `{`: the `regex` text of `{n}`, `{n,}` or `{n,m}`, or `None` (and nothing read)
    /// when what follows is not one.
    fn braces(&mut self, at: usize) -> Result<Option<String>, PatternError> {
        let start = self.pos;
        let min = self.digits();
        let (comma, max) = if self.eat(',') {
            (true, self.digits())
        } else {
            (false, None)
        };
        let (Some(min), true) = (min, self.eat('}')) else {
            self.pos = start;
            return Ok(None);
        };
        if comma && max.is_none() {
            return Ok(Some(format!("{{{},}}", count(at, &min)?)));
        }
        let Some(max) = max else {
            return Ok(Some(format!("{{{}}}", count(at, &min)?)));
        };
        // Compared as decimal strings, so that counts of any length are ordered correctly.
        if (min.len(), &min) > (max.len(), &max) {
            return Err(invalid(
                at,
                format!("quantifier `{{{min},{max}}}` has its bounds out of order"),
            ));
        }
        Ok(Some(format!(
            "{{{},{}}}",
            count(at, &min)?,
            count(at, &max)?
        )))
    }

    /// A run of decimal digits, without leading zeros (`"0"` for zero).
    fn digits(&mut self) -> Option<String> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        if self.pos == start {
            return None;
        }
        let digits = self.text(start);
        let trimmed = digits.trim_start_matches('0');
        Some(if trimmed.is_empty() { "0" } else { trimmed }.to_owned())
    }

    /// After `(`.
    fn group(&mut self, at: usize) -> Result<(), PatternError> {
        let lookaround = [
            ("?=", "lookahead `(?=`"),
            ("?!", "negative lookahead `(?!`"),
            ("?<=", "lookbehind `(?<=`"),
            ("?<!", "negative lookbehind `(?<!`"),
        ];
        for (syntax, name) in lookaround {
            if self.eat_str(syntax) {
                return Err(PatternError::Backtracking(format!(
                    "{name} (at character {})",
                    at + 1
                )));
            }
        }
        if self.eat_str("?<") {
            let name = self.group_name(at)?;
            self.declare(at, name)?;
        } else if self.eat('?') && !self.eat(':') {
            let modifiers = self.pos;
            while self
                .peek()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '-')
            {
                self.pos += 1;
            }
            if self.pos > modifiers && self.eat(':') {
                return Err(PatternError::Unsupported(format!(
                    "the modifier group `{}` (at character {}) is not supported: perago matches \
                     patterns case-sensitively and without flags, so write the cases out, as in `[Aa]`",
                    self.text(at),
                    at + 1
                )));
            }
            return Err(invalid(
                at,
                "`(?` must open `(?:`, a named group `(?<name>` or a lookaround",
            ));
        }
        if self.open.len() > MAX_DEPTH {
            return Err(PatternError::Unsupported(format!(
                "groups nested more than {MAX_DEPTH} deep (at character {}) are not supported",
                at + 1
            )));
        }
        self.groups += 1;
        self.open.push(Open {
            id: self.groups,
            alternative: 0,
            at,
        });
        self.syntax("(?:");
        Ok(())
    }

    /// After `(?<` or `\k<`: the group name up to `>`, with its `\u` escapes decoded.
    fn group_name(&mut self, at: usize) -> Result<String, PatternError> {
        let mut name = String::new();
        loop {
            let c = match self.bump() {
                None => return Err(invalid(at, "group name without its closing `>`")),
                Some('>') => break,
                Some('\\') if self.eat('u') => {
                    let cp = self.unicode_escape(self.pos - 2)?;
                    char::from_u32(cp)
                        .ok_or_else(|| invalid(at, "a lone surrogate cannot be in a group name"))?
                }
                Some(c) => c,
            };
            name.push(c);
        }
        if !GROUP_NAME.is_match(&name) {
            return Err(invalid(
                at,
                format!("group name `{name}` is not an identifier"),
            ));
        }
        Ok(name)
    }

    /// Records a group name; two groups may share one only in different alternatives.
    fn declare(&mut self, at: usize, name: String) -> Result<(), PatternError> {
        let path: Vec<(usize, usize)> = self.open.iter().map(|o| (o.id, o.alternative)).collect();
        let clash = self.names.iter().any(|(other, other_path)| {
            *other == name
                && path
                    .iter()
                    .zip(other_path)
                    .take_while(|((a, _), (b, _))| a == b)
                    .all(|((_, x), (_, y))| x == y)
        });
        if clash {
            return Err(invalid(
                at,
                format!("group name `{name}` is used twice where both groups can match"),
            ));
        }
        self.names.push((name, path));
        Ok(())
    }

    /// After `\` outside a class.
    fn atom_escape(&mut self, at: usize) -> Result<(), PatternError> {
        let Some(c) = self.bump() else {
            return Err(invalid(at, "`\\` at the end of the pattern"));
        };
        match c {
            'b' => self.syntax(r"(?-u:\b)"),
            'B' => self.syntax(r"(?-u:\B)"),
            '1'..='9' => {
                self.digits();
                return Err(PatternError::Backtracking(format!(
                    "the backreference `{}` (at character {})",
                    self.text(at),
                    at + 1
                )));
            }
            'k' => {
                if self.eat('<') {
                    while self.peek().is_some_and(|c| c != '>') {
                        self.pos += 1;
                    }
                    self.eat('>');
                    return Err(PatternError::Backtracking(format!(
                        "the backreference `{}` (at character {})",
                        self.text(at),
                        at + 1
                    )));
                }
                return Err(invalid(at, "`\\k` must name a group, as `\\k<name>`"));
            }
            'd' | 'D' | 's' | 'S' | 'w' | 'W' | 'p' | 'P' => {
                let items = self.class_escape(at, c)?;
                self.atom(&emit_class(false, &items));
            }
            c => {
                let cp = self.character_escape(at, c, false)?;
                self.literal(cp);
            }
        }
        Ok(())
    }

    /// After `\` and `c`, a character escape (`\n`, `\x41`, `\u{1F600}`, `\.` …): its code
    /// point, maybe a lone surrogate.
    fn character_escape(
        &mut self,
        at: usize,
        c: char,
        in_class: bool,
    ) -> Result<u32, PatternError> {
        Ok(match c {
            'f' => 0x0C,
            'n' => 0x0A,
            'r' => 0x0D,
            't' => 0x09,
            'v' => 0x0B,
            'c' => match self.peek() {
                Some(letter) if letter.is_ascii_alphabetic() => {
                    self.pos += 1;
                    letter as u32 % 32
                }
                _ => return Err(invalid(at, "`\\c` must be followed by a letter A-Z or a-z")),
            },
            '0' if self.peek().is_some_and(|c| c.is_ascii_digit()) => {
                return Err(invalid(
                    at,
                    "`\\0` followed by a digit is not allowed in Unicode mode",
                ));
            }
            '0' => 0,
            'x' => {
                let hex = (self.hex_digit(0), self.hex_digit(1));
                let (Some(hi), Some(lo)) = hex else {
                    return Err(invalid(at, "`\\x` must be followed by two hex digits"));
                };
                self.pos += 2;
                hi * 16 + lo
            }
            'u' => self.unicode_escape(at)?,
            '-' if in_class => '-' as u32,
            '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'
            | '/' => c as u32,
            c => {
                return Err(invalid(
                    at,
                    format!("`\\{c}` is not an escape in Unicode mode"),
                ));
            }
        })
    }

    /// The value of the hex digit `ahead` characters on.
    fn hex_digit(&self, ahead: usize) -> Option<u32> {
        self.peek_at(ahead).and_then(|c| c.to_digit(16))
    }

    /// Four hex digits `ahead` characters on.
    fn hex4(&self, ahead: usize) -> Option<u32> {
        (0..4).try_fold(0, |v, i| Some(v * 16 + self.hex_digit(ahead + i)?))
    }

    /// After `\u`: `XXXX`, a surrogate pair `XXXX\uXXXX` (one code point) or `{X…}`.
    fn unicode_escape(&mut self, at: usize) -> Result<u32, PatternError> {
        if self.eat('{') {
            let start = self.pos;
            let mut cp: u32 = 0;
            while let Some(d) = self.hex_digit(0) {
                cp = cp.saturating_mul(16).saturating_add(d);
                self.pos += 1;
            }
            if self.pos == start || !self.eat('}') || cp > MAX_CODE_POINT {
                return Err(invalid(
                    at,
                    "`\\u{…}` must hold a code point in hex, at most 10FFFF",
                ));
            }
            return Ok(cp);
        }
        let Some(unit) = self.hex4(0) else {
            return Err(invalid(
                at,
                "`\\u` must be followed by four hex digits or `{…}`",
            ));
        };
        self.pos += 4;
        if (0xD800..=0xDBFF).contains(&unit)
            && self.peek() == Some('\\')
            && self.peek_at(1) == Some('u')
            && let Some(trail @ 0xDC00..=0xDFFF) = self.hex4(2)
        {
            self.pos += 6;
            return Ok(0x10000 + ((unit - 0xD800) << 10) + (trail - 0xDC00));
        }
        Ok(unit)
    }

    /// After `\p` or `\P` (`c`), or a `\d`-like escape: the class items it stands for.
    fn class_escape(&mut self, at: usize, c: char) -> Result<Vec<Item>, PatternError> {
        let negated = c.is_ascii_uppercase();
        let ranges = match c.to_ascii_lowercase() {
            'd' => DIGIT,
            'w' => WORD,
            's' => SPACE,
            _ => return self.property(at, negated),
        };
        Ok(set(ranges, negated))
    }

    /// After `\p` or `\P`: `{name}` or `{name=value}` with ECMA-262's names.
    fn property(&mut self, at: usize, negated: bool) -> Result<Vec<Item>, PatternError> {
        if !self.eat('{') {
            return Err(invalid(at, "`\\p` must be followed by `{…}`, as `\\p{L}`"));
        }
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '=')
        {
            self.pos += 1;
        }
        let body = self.text(start);
        if !self.eat('}') {
            return Err(invalid(
                at,
                "`\\p{` must hold a property name of letters, digits and `_`, then `}`",
            ));
        }
        let lookup = |table: &[&[&'static str]], name: &str| {
            table
                .iter()
                .find(|names| names.contains(&name))
                .map(|names| names[0])
        };
        let unknown = || {
            invalid(
                at,
                format!(
                    "`\\p{{{body}}}` names no Unicode property as ECMA-262 spells them, such \
                     as `\\p{{L}}`, `\\p{{Letter}}`, `\\p{{Alphabetic}}` or `\\p{{Script=Greek}}`"
                ),
            )
        };
        let name = match body.split_once('=') {
            None => match lookup(GENERAL_CATEGORIES, &body) {
                Some(category) => format!("gc={category}"),
                None => lookup(BINARY_PROPERTIES, &body)
                    .ok_or_else(unknown)?
                    .to_owned(),
            },
            Some(("General_Category" | "gc", value)) => {
                format!(
                    "gc={}",
                    lookup(GENERAL_CATEGORIES, value).ok_or_else(unknown)?
                )
            }
            Some((property @ ("Script" | "sc" | "Script_Extensions" | "scx"), value)) => {
                // ECMA-262 takes a script's exact name (`Old_Italic`) or code (`Ital`), where
                // `regex` would also take `old italic`: so only that spelling passes.
                let words = value.split('_').all(|w| {
                    let mut cs = w.chars();
                    cs.next().is_some_and(|c| c.is_ascii_uppercase())
                        && cs.all(|c| c.is_ascii_lowercase())
                });
                if !(words || value == "SignWriting") {
                    return Err(unknown());
                }
                let short = if property.starts_with("Script_") || property == "scx" {
                    "scx"
                } else {
                    "sc"
                };
                format!("{short}={value}")
            }
            Some(_) => return Err(unknown()),
        };
        // `regex` has no surrogate category (no `char` is one): the range it stands for.
        if name == "gc=Surrogate" {
            return Ok(set(&[SURROGATES], negated));
        }
        if Regex::new(&format!(r"\p{{{name}}}")).is_err() {
            return Err(PatternError::Unsupported(format!(
                "the Unicode property `\\p{{{body}}}` (at character {}) is not supported: the \
                 `regex` crate's Unicode tables lack it",
                at + 1
            )));
        }
        Ok(vec![Item::Property { name, negated }])
    }

    /// After `[`: the whole class, in `regex` syntax.
    fn class(&mut self, at: usize) -> Result<String, PatternError> {
        let negated = self.eat('^');
        let mut items = Vec::new();
        loop {
            match self.peek() {
                None => return Err(invalid(at, "unclosed class `[`")),
                Some(']') => {
                    self.pos += 1;
                    return Ok(emit_class(negated, &items));
                }
                Some(_) => {}
            }
            let first = self.class_atom(at)?;
            // `-` between two atoms makes a range; first, last, or after a range, it is literal.
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                let dash = self.pos;
                self.pos += 1;
                match (first, self.class_atom(at)?) {
                    (ClassAtom::Char(lo), ClassAtom::Char(hi)) if lo <= hi => {
                        items.push(Item::Range(lo, hi));
                    }
                    (ClassAtom::Char(_), ClassAtom::Char(_)) => {
                        return Err(invalid(dash, "class range out of order"));
                    }
                    _ => {
                        return Err(invalid(
                            dash,
                            "a class escape such as `\\d` cannot bound a range in Unicode mode: \
                             write `\\-` for a literal `-`",
                        ));
                    }
                }
            } else {
                match first {
                    ClassAtom::Char(c) => items.push(Item::Range(c, c)),
                    ClassAtom::Set(set) => items.extend(set),
                }
            }
        }
    }

    /// One atom of the class opened at `at`.
    fn class_atom(&mut self, at: usize) -> Result<ClassAtom, PatternError> {
        let escape = self.pos;
        match self.bump() {
            None => Err(invalid(at, "unclosed class `[`")),
            Some('\\') => match self.bump() {
                None => Err(invalid(escape, "`\\` at the end of the pattern")),
                Some('b') => Ok(ClassAtom::Char(0x08)),
                Some(c @ ('d' | 'D' | 's' | 'S' | 'w' | 'W' | 'p' | 'P')) => {
                    Ok(ClassAtom::Set(self.class_escape(escape, c)?))
                }
                Some(c) => Ok(ClassAtom::Char(self.character_escape(escape, c, true)?)),
            },
            Some(c) => Ok(ClassAtom::Char(c as u32)),
        }
    }
}

/// The ranges, or (`negated`) their complement among all code points.
fn set(ranges: &[(u32, u32)], negated: bool) -> Vec<Item> {
    if !negated {
        return ranges.iter().map(|&(lo, hi)| Item::Range(lo, hi)).collect();
    }
    let mut items = Vec::new();
    let mut next = 0;
    for &(lo, hi) in ranges {
        if lo > next {
            items.push(Item::Range(next, lo - 1));
        }
        next = hi + 1;
    }
    if next <= MAX_CODE_POINT {
        items.push(Item::Range(next, MAX_CODE_POINT));
    }
    items
}

/// A class of `items` in `regex` syntax. Surrogates are left out, as no `char` is one; a class
/// left empty matches nothing, or (negated) everything.
fn emit_class(negated: bool, items: &[Item]) -> String {
    let mut body = String::new();
    for item in items {
        match item {
            Item::Range(lo, hi) => {
                let (s_lo, s_hi) = SURROGATES;
                for (a, b) in [(*lo, (*hi).min(s_lo - 1)), ((*lo).max(s_hi + 1), *hi)] {
                    if a <= b {
                        push_code_point(&mut body, a);
                        if b > a {
                            body.push('-');
                            push_code_point(&mut body, b);
                        }
                    }
                }
            }
            Item::Property { name, negated } => {
                let p = if *negated { 'P' } else { 'p' };
                let _ = write!(body, r"\{p}{{{name}}}");
            }
        }
    }
    match (body.is_empty(), negated) {
        (true, false) => NOTHING.to_owned(),
        (true, true) => ANYTHING.to_owned(),
        (false, false) => format!("[{body}]"),
        (false, true) => format!("[^{body}]"),
    }
}

/// A code point as a `regex` literal, in a class or out: letters, digits and non-ASCII
/// printable characters as themselves, anything else escaped, so it is never syntax.
fn push_code_point(out: &mut String, cp: u32) {
    match char::from_u32(cp) {
        Some(c)
            if c.is_ascii_alphanumeric()
                || (!c.is_ascii() && !c.is_whitespace() && !c.is_control()) =>
        {
            out.push(c);
        }
        _ => {
            let _ = write!(out, r"\x{{{cp:X}}}");
        }
    }
}

/// A repetition count `regex` can take (a `u32`).
fn count(at: usize, digits: &str) -> Result<u32, PatternError> {
    digits.parse().map_err(|_| {
        PatternError::Unsupported(format!(
            "the repetition count {digits} (at character {}) is over {}, the largest perago supports",
            at + 1,
            u32::MAX
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compiles each pattern and checks it against strings it must (`true`) or must not match.
    fn verdicts(cases: &[(&str, &[(&str, bool)])]) {
        for (source, strings) in cases {
            let regex = compile(source).unwrap_or_else(|e| panic!("{source:?} refused: {e}"));
            for (s, expected) in *strings {
                assert_eq!(
                    regex.is_match(s),
                    *expected,
                    "{source:?} on {s:?} (translated: {})",
                    translate(source).unwrap_or_default()
                );
            }
        }
    }

    /// The error of a refused pattern.
    fn refused(source: &str) -> PatternError {
        match compile(source) {
            Ok(_) => panic!("{source:?} should be refused"),
            Err(e) => e,
        }
    }

    /// Lookaheads that open a pattern at its `^` (Pydantic's `Decimal` pattern) are matched
    /// as searches of their own; anywhere else, or before a top-level `|`, they are refused.
    #[test]
    fn leading_lookaheads() {
        verdicts(&[
            (
                r"^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$",
                &[
                    ("1.5", true),
                    ("-0.25", true),
                    ("+10", true),
                    (".5", true),
                    ("", false),
                    ("-", false),
                    ("+.", false),
                    ("1.2.3", false),
                    ("1e5", false),
                ],
            ),
            (
                r"^(?=[a-z])(?!admin)[a-z0-9]+",
                &[
                    ("user1", true),
                    ("admin", false),
                    ("administrator", false),
                    ("1user", false),
                    ("u-", true),
                ],
            ),
            (r"^(?!(a|b)[)]c)x", &[("x", true), ("a)cx", false)]),
        ]);
        assert!(matches!(
            refused(r"^(?!a)b|c"),
            PatternError::Unsupported(_)
        ));
        for source in [
            r"a(?!b)",
            r"^x(?!a)",
            r"(?!a)^b",
            r"^(?<!a)b",
            r"^(?!a)b(?=c)",
        ] {
            assert!(
                matches!(refused(source), PatternError::Backtracking(_)),
                "{source}"
            );
        }
    }

    #[test]
    fn class_escapes_are_ascii_or_ecma_sets() {
        verdicts(&[
            (
                r"^\d+$",
                &[
                    ("0123456789", true),
                    ("\u{663}", false),
                    ("\u{1d7d8}", false),
                ],
            ),
            (r"^\D$", &[("a", true), ("5", false), ("\u{663}", true)]),
            (
                r"^\w+$",
                &[
                    ("aZ_09", true),
                    ("é", false),
                    ("\u{1c5}", false),
                    ("\u{212a}", false),
                ],
            ),
            (r"^\W$", &[("é", true), ("_", false), ("-", true)]),
            (
                r"^\s$",
                &[
                    ("\u{85}", false),
                    ("\u{180e}", false),
                    ("\u{200b}", false),
                    ("\u{1c}", false),
                ],
            ),
            (
                r"^\S$",
                &[("\u{85}", true), ("\u{feff}", false), ("x", true)],
            ),
            (
                r"^[\d\s]+$",
                &[("1 2", true), ("1\u{3000}2", true), ("1x", false)],
            ),
            (r"^[^\w]$", &[("a", false), ("é", true)]),
            (r"^[\W\d]$", &[("5", true), ("a", false), ("é", true)]),
        ]);
        let spaces: String = SPACE
            .iter()
            .flat_map(|&(lo, hi)| (lo..=hi).filter_map(char::from_u32))
            .collect();
        assert_eq!(spaces.chars().count(), 25);
        verdicts(&[(r"^\s+$", &[(spaces.as_str(), true)])]);
        for c in spaces.chars() {
            verdicts(&[(r"\S", &[(c.to_string().as_str(), false)])]);
        }
    }

    #[test]
    fn word_boundaries_are_ascii() {
        verdicts(&[
            // A boundary is between an ASCII word character and anything else.
            (r"\bé", &[("é", false), ("éé", false), ("aé", true)]),
            (r"\Bé", &[("é", true), (" é", true)]),
            (r"a\b", &[("aé", true), ("ab", false), ("a", true)]),
            (r"^\b\w+\b$", &[("word", true), ("", false)]),
            (r"\B", &[("", true), ("é", true), ("a", false)]),
        ]);
    }

    #[test]
    fn dot_and_anchors() {
        verdicts(&[
            (
                r"^.$",
                &[
                    ("a", true),
                    ("😀", true),
                    ("\t", true),
                    ("\u{85}", true),
                    ("", false),
                ],
            ),
            (
                r"^.$",
                &[
                    ("\n", false),
                    ("\r", false),
                    ("\u{2028}", false),
                    ("\u{2029}", false),
                ],
            ),
            (
                r"^a$",
                &[("a", true), ("a\n", false), ("\na", false), ("ba", false)],
            ),
            (r"a$", &[("ba", true), ("ab", false)]),
            (r"^", &[("", true), ("x", true)]),
            (r"x^", &[("x", false)]),
            (r"a|^b", &[("cb", false), ("ca", true), ("b", true)]),
        ]);
    }

    #[test]
    fn character_escapes() {
        verdicts(&[
            (
                r"^\u0041\x42\u{43}\u{000000044}$",
                &[("ABCD", true), ("abcd", false)],
            ),
            (r"^\uD83D\uDE00$", &[("😀", true)]),
            (r"^\u{1F600}$", &[("😀", true)]),
            (r"^[\uD83D\uDE00]$", &[("😀", true)]),
            (
                r"^[\uD83D\uDE00-\uD83D\uDE4F]+$",
                &[("😀😃🙏", true), ("🚀", false)],
            ),
            // A lone surrogate is a code point no Rust string holds.
            (
                r"\uD83D",
                &[("😀", false), ("\u{d7ff}", false), ("", false)],
            ),
            (r"\uD83D|x", &[("x", true)]),
            (r"^\uD83D\u{DE00}$", &[("😀", false)]),
            (r"^\cJ\cj\t\n\v\f\r\0$", &[("\n\n\t\n\u{b}\u{c}\r\0", true)]),
            (
                r"^\/\^\$\\\.\*\+\?\(\)\[\]\{\}\|$",
                &[("/^$\\.*+?()[]{}|", true)],
            ),
            (r"^\.$", &[(".", true), ("a", false)]),
        ]);
    }

    #[test]
    fn classes() {
        verdicts(&[
            ("[^]", &[("x", true), ("\n", true), ("", false)]),
            ("^[^]*$", &[("", true), ("a\nb", true)]),
            ("[]", &[("x", false), ("", false)]),
            ("a[]|b", &[("a", false), ("b", true)]),
            (r"^[\d-]$", &[("-", true), ("5", true), ("z", false)]),
            (r"^[-\d]$", &[("-", true), ("5", true)]),
            (
                r"^[a-c-e]$",
                &[("b", true), ("-", true), ("e", true), ("d", false)],
            ),
            (r"^[--/]$", &[(".", true), ("-", true), ("0", false)]),
            (r"^[\-]$", &[("-", true)]),
            (r"^[\b]$", &[("\u{8}", true), ("b", false)]),
            (r"^[\]]$", &[("]", true)]),
            (r"^[\^]$", &[("^", true)]),
            ("^[a^]$", &[("^", true), ("a", true)]),
            ("^[\\^a]$", &[("^", true)]),
            (r"^[\0-\x1F]$", &[("\u{1}", true), (" ", false)]),
            (r"^[\u{1F600}-\u{1F64F}]$", &[("😃", true), ("🚀", false)]),
            (
                r"^[\uD800-\uDFFF]$",
                &[("x", false), ("\u{d7ff}", false), ("\u{e000}", false)],
            ),
            (
                r"^[\uD000-\uE000]$",
                &[("\u{d7ff}", true), ("\u{e000}", true), ("\u{e001}", false)],
            ),
            (r"^[^\uD800]$", &[("x", true)]),
            (r"^[^\d\D]$", &[("x", false), ("1", false)]),
            (r"^[\s\S]$", &[("x", true), ("\n", true)]),
        ]);
    }

    /// Characters that are syntax in a `regex` class but literal in an ECMA-262 one.
    #[test]
    fn regex_class_syntax_is_literal() {
        verdicts(&[
            ("^[a&&b]+$", &[("&", true), ("a&b", true), ("c", false)]),
            ("^[a~~b]+$", &[("~", true), ("ab~", true)]),
            ("^[[a]+$", &[("[", true), ("a[", true), ("]", false)]),
            ("^[ab-]+$", &[("-", true)]),
            ("^[a-b&&c]+$", &[("&c", true), ("d", false)]),
            ("^[!-#]$", &[("\"", true)]),
            ("^[ #]$", &[(" ", true), ("#", true)]),
            ("^#$", &[("#", true)]),
            ("^a b$", &[("a b", true), ("ab", false)]),
            ("^&~-$", &[("&~-", true)]),
            ("^[\\[\\x5D]$", &[("[", true), ("]", true)]),
        ]);
    }

    #[test]
    fn quantifiers_and_groups() {
        verdicts(&[
            ("^a{2}$", &[("aa", true), ("a", false), ("aaa", false)]),
            ("^a{2,}$", &[("aaaa", true), ("a", false)]),
            ("^a{2,3}$", &[("aaa", true), ("aaaa", false)]),
            ("^a{02,003}?$", &[("aaa", true), ("a", false)]),
            ("^a{0}$", &[("", true), ("a", false)]),
            ("^a+?b*?c??$", &[("aab", true), ("ac", true)]),
            ("^(?:ab)*$", &[("abab", true), ("aba", false)]),
            (
                r"^(?<year>\d{4})-(?<month>\d\d)$",
                &[("2024-01", true), ("24-01", false)],
            ),
            ("^(a|b)+$", &[("abba", true), ("abc", false)]),
            ("^(|a)$", &[("", true), ("a", true)]),
            ("^()*$", &[("", true)]),
            ("(?:)", &[("", true)]),
            ("^(?:^)*a", &[("a", true)]),
            ("a|", &[("b", true)]),
            ("(?<a>x)|(?<a>y)", &[("y", true)]),
            (
                "(?<$x_1>a)(?<π>b)(?<\\u0063>c)(?<\\u{64}>d)",
                &[("abcd", true)],
            ),
        ]);
    }

    #[test]
    fn unicode_properties() {
        verdicts(&[
            (r"^\p{L}+$", &[("héllo", true), ("h1", false)]),
            (r"^\p{Letter}$", &[("é", true)]),
            (r"^\P{L}$", &[("1", true), ("a", false)]),
            (
                r"^\p{Lu}\p{gc=Ll}\p{General_Category=Uppercase_Letter}$",
                &[("AbC", true), ("abC", false)],
            ),
            (r"^\p{Script=Greek}+$", &[("αβγ", true), ("abc", false)]),
            (
                r"^\p{sc=Grek}\p{scx=Grek}\p{Script_Extensions=Greek}$",
                &[("αβγ", true)],
            ),
            (r"^\p{Script=Old_Italic}$", &[("\u{10300}", true)]),
            (r"^\p{digit}$", &[("\u{663}", true), ("a", false)]),
            (r"^\p{White_Space}$", &[("\u{85}", true)]),
            (r"^\p{ASCII}+$", &[("abc", true), ("é", false)]),
            (r"^\p{Any}$", &[("😀", true)]),
            (r"^\p{Emoji_Presentation}$", &[("😀", true), ("a", false)]),
            (r"\p{Cs}", &[("x", false), ("", false)]),
            (r"^\P{Cs}$", &[("x", true)]),
            (r"^[^\p{Cs}]$", &[("x", true)]),
            (r"^[\p{Lu}\d]+$", &[("A1", true), ("a", false)]),
            (r"^[^\P{Lu}]$", &[("A", true), ("a", false)]),
        ]);
    }

    /// Every name in the tables compiles, but the surrogates (which are a range here) and the
    /// one binary property `regex` lacks.
    #[test]
    fn property_tables_name_what_regex_knows() {
        for names in GENERAL_CATEGORIES.iter().chain(BINARY_PROPERTIES) {
            for name in *names {
                let source = format!(r"\p{{{name}}}");
                match compile(&source) {
                    Ok(_) => {}
                    Err(PatternError::Unsupported(_))
                        if ["Changes_When_NFKC_Casefolded", "CWKCF"].contains(name) => {}
                    Err(e) => panic!("{source}: {e}"),
                }
            }
        }
    }

    #[test]
    fn invalid_patterns_are_invalid() {
        for source in [
            "(",
            "a)",
            "[",
            "[a",
            "[a-",
            "a{2,1}",
            "{1}",
            "*",
            "+a",
            "a**",
            "a{2}{3}",
            "^*",
            r"\b+",
            "(?:a)|*",
            "(*)",
            "\\",
            r"\-",
            r"\a",
            r"\e",
            r"\_",
            r"\ ",
            "a{",
            "a{1",
            "a{,2}",
            "a{1,2",
            "}",
            "]",
            r"\c",
            r"\c1",
            r"\00",
            r"\01",
            r"\x4",
            r"\xG0",
            r"\u12",
            r"\u{110000}",
            r"\u{}",
            r"\u{FFFFFFFFFF}",
            r"\p{L",
            r"\p{letter}",
            r"\p{Greek}",
            r"\p{Script=greek}",
            r"\p{Script=GREEK}",
            r"\p{Foo=Bar}",
            r"\p{gc=Greek}",
            r"\pL",
            r"\p{}",
            r"\p{L=L}",
            "[z-a]",
            r"[\d-z]",
            r"[a-\d]",
            r"[\p{L}-z]",
            "(?<1a>x)",
            "(?<a>x)(?<a>y)",
            "(?<a>(?<a>x))",
            "(?<>x)",
            "(?<a",
            "(?<a-b>x)",
            "(?x)",
            "(?i)",
            r"\k",
            r"\ka",
            r"[\B]",
            r"[\1]",
            r"[\k]",
            r"[\c1]",
            r"(?<\u{D800}>x)",
        ] {
            assert!(
                matches!(refused(source), PatternError::Invalid(_)),
                "{source:?}: {}",
                refused(source)
            );
        }
    }

    #[test]
    fn backtracking_constructs_are_refused_by_name() {
        for (source, construct) in [
            ("(?=a)", "lookahead `(?=`"),
            ("a(?!b)", "negative lookahead `(?!`"),
            ("(?<=a)b", "lookbehind `(?<=`"),
            ("(?<!a)b", "negative lookbehind `(?<!`"),
            (r"(a)\1", r"backreference `\1`"),
            (r"\12(a)", r"backreference `\12`"),
            (r"(?<n>a)\k<n>", r"backreference `\k<n>`"),
        ] {
            let PatternError::Backtracking(what) = refused(source) else {
                panic!("{source:?}: {}", refused(source));
            };
            assert!(what.contains(construct), "{source:?}: {what}");
        }
    }

    #[test]
    fn unsupported_and_oversized_patterns() {
        for source in [
            "(?i:a)",
            "(?-i:a)",
            r"\p{Script=Katakana_Or_Hiragana}",
            r"\p{CWKCF}",
            "a{4294967296}",
            "a{1,99999999999999999999}",
            &"(".repeat(MAX_DEPTH + 1),
        ] {
            assert!(
                matches!(refused(source), PatternError::Unsupported(_)),
                "{source:?}: {}",
                refused(source)
            );
        }
        for source in ["a{10000000}", r"\p{L}{1000}", "(?:(?:a{1000}){1000}){1000}"] {
            assert_eq!(refused(source), PatternError::TooLarge, "{source:?}");
        }
        // The deepest nesting allowed still compiles, classes and quantifiers included.
        let deep = "(?:[^\\d\\p{L}]*".repeat(MAX_DEPTH) + &")+".repeat(MAX_DEPTH);
        verdicts(&[(deep.as_str(), &[("-", true)])]);
    }

    /// Malformed input of every shape: an error or a pattern, never a panic, and never a
    /// translation the `regex` crate rejects.
    #[test]
    fn no_pattern_panics() {
        use proptest::prelude::*;
        let atoms = prop_oneof![
            proptest::sample::select(vec![
                "\\",
                "(",
                ")",
                "[",
                "]",
                "{",
                "}",
                "|",
                "^",
                "$",
                ".",
                "*",
                "+",
                "?",
                "-",
                ",",
                ":",
                "=",
                "!",
                "<",
                ">",
                "(?",
                "(?<",
                "(?:",
                "\\u",
                "\\u{",
                "\\x",
                "\\c",
                "\\p{",
                "\\P{",
                "\\k<",
                "0",
                "1",
                "9",
                "a",
                "F",
                "d",
                "D",
                "s",
                "w",
                "b",
                "B",
                "k",
                "L",
                "Lu",
                "sc=",
                "Greek",
                "_",
                "é",
                "😀",
                "\u{D7FF}",
                "\u{FEFF}",
                "\u{10FFFF}",
                "D83D",
                "DE00",
                "\\uD83D",
                "\\uDE00",
                "}",
                "]",
            ])
            .prop_map(String::from),
            any::<char>().prop_map(String::from),
        ];
        let config = ProptestConfig {
            cases: 4000,
            failure_persistence: None,
            ..ProptestConfig::default()
        };
        proptest::proptest!(config, |(parts in proptest::collection::vec(atoms, 0..24))| {
            let source = parts.concat();
            match compile(&source) {
                Ok(regex) => {
                    for s in ["", "a", "aa-1 é😀\n", "\u{10FFFF}"] {
                        regex.is_match(s);
                    }
                }
                Err(PatternError::Unsupported(e)) => {
                    prop_assert!(!e.contains("refused by the `regex` crate"), "{source:?}: {e}");
                }
                Err(_) => {}
            }
        });
    }
}
