//! How `perago validate` reports each document: `FILE:LINE: $.path: message` lines, or one
//! JSON object per document.
//!
//! Both are written straight into one buffer, reused for the whole run and handed to the
//! output whole once it holds [`BUFFER`] bytes (or when the caller flushes): no formatter and
//! no serializer per document. The JSON is byte for byte what `serde_json` writes for the
//! same record (the tests hold it to that).

use crate::locate;
use clap::ValueEnum;
use perago_schema::Violation;
use std::io::{self, Write};

/// The output format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// A validated document.
#[derive(Debug)]
pub struct Checked<'a> {
    /// The file's display name.
    pub file: &'a str,
    /// The document's text.
    pub text: &'a [u8],
    /// Its line, for a JSON Lines document.
    pub line: Option<usize>,
    /// Where the parser stopped, for a malformed document.
    pub error_line: Option<usize>,
    /// Every violation, in check order.
    pub violations: Vec<Violation>,
}

/// What the buffer holds before it is written out.
const BUFFER: usize = 64 * 1024;

/// Writes each document's report and counts them.
#[derive(Debug)]
pub struct Report<W> {
    out: W,
    /// What is written and not yet handed to `out`.
    buf: Vec<u8>,
    format: Format,
    /// The file last reported, and how it opens a JSON record (`{"file":"…"`).
    file: (String, Vec<u8>),
    /// Documents reported.
    pub documents: usize,
    /// Documents with a violation.
    pub invalid: usize,
}

impl<W: Write> Report<W> {
    /// A report written to `out` (in blocks: `out` needs no buffer of its own).
    pub fn new(out: W, format: Format) -> Self {
        Report {
            out,
            buf: Vec::with_capacity(BUFFER),
            format,
            file: (String::new(), Vec::new()),
            documents: 0,
            invalid: 0,
        }
    }

    /// Reports one document.
    pub fn document(&mut self, doc: &Checked<'_>) -> io::Result<()> {
        self.documents += 1;
        if !doc.violations.is_empty() {
            self.invalid += 1;
        }
        match self.format {
            Format::Json => self.json(doc),
            Format::Text => self.text(doc),
        }
        if self.buf.len() >= BUFFER {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// `{"file":…,"line":…,"valid":…,"violations":[{"path":…,"code":…,"message":…},…]}`.
    fn json(&mut self, doc: &Checked<'_>) {
        if self.file.0 != doc.file {
            let mut open = b"{\"file\":".to_vec();
            json_string(&mut open, doc.file);
            self.file = (doc.file.to_owned(), open);
        }
        let buf = &mut self.buf;
        buf.extend_from_slice(&self.file.1);
        if let Some(line) = doc.line {
            buf.extend_from_slice(b",\"line\":");
            decimal(buf, line);
        }
        if doc.violations.is_empty() {
            buf.extend_from_slice(b",\"valid\":true,\"violations\":[]}\n");
            return;
        }
        buf.extend_from_slice(b",\"valid\":false,\"violations\":[");
        for (i, v) in doc.violations.iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            buf.extend_from_slice(b"{\"path\":");
            json_string(buf, &v.path);
            buf.extend_from_slice(b",\"code\":\"");
            buf.extend_from_slice(v.code.as_str().as_bytes());
            buf.extend_from_slice(b"\",\"message\":");
            json_string(buf, &v.message);
            buf.push(b'}');
        }
        buf.extend_from_slice(b"]}\n");
    }

    /// `FILE:LINE: $.path: message` per violation; nothing for a valid document.
    fn text(&mut self, doc: &Checked<'_>) {
        if doc.violations.is_empty() {
            return;
        }
        let located;
        let lines: &[usize] = match doc.line.or(doc.error_line) {
            Some(line) => {
                located = vec![line; doc.violations.len()];
                &located
            }
            None => {
                let paths: Vec<&str> = doc.violations.iter().map(|v| v.path.as_str()).collect();
                located = locate::lines(doc.text, &paths);
                &located
            }
        };
        let buf = &mut self.buf;
        for (v, line) in doc.violations.iter().zip(lines) {
            buf.extend_from_slice(doc.file.as_bytes());
            buf.push(b':');
            decimal(buf, *line);
            buf.extend_from_slice(b": ");
            buf.extend_from_slice(v.path.as_bytes());
            buf.extend_from_slice(b": ");
            buf.extend_from_slice(v.message.as_bytes());
            buf.push(b'\n');
        }
    }

    /// Hands everything written to the output and flushes it.
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        self.out.flush()
    }
}

/// `n` in decimal, two digits at a time.
fn decimal(buf: &mut Vec<u8>, mut n: usize) {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
                                2021222324252627282930313233343536373839\
                                4041424344454647484950515253545556575859\
                                6061626364656667686970717273747576777879\
                                8081828384858687888990919293949596979899";
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    while n >= 100 {
        let pair = (n % 100) * 2;
        n /= 100;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[n * 2..n * 2 + 2]);
    } else {
        at -= 1;
        digits[at] = b'0' + n as u8;
    }
    buf.extend_from_slice(&digits[at..]);
}

/// `s` as a JSON string, escaped as serde_json escapes it: `"` and `\`, the control
/// characters (`\b`, `\f`, `\n`, `\r`, `\t` by name, the others as `\u00xx`), nothing else.
fn json_string(buf: &mut Vec<u8>, s: &str) {
    buf.push(b'"');
    let bytes = s.as_bytes();
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b >= 0x20 && b != b'"' && b != b'\\' {
            continue;
        }
        buf.extend_from_slice(&bytes[from..i]);
        match b {
            b'"' => buf.extend_from_slice(b"\\\""),
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b'\x08' => buf.extend_from_slice(b"\\b"),
            b'\x0c' => buf.extend_from_slice(b"\\f"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            b'\r' => buf.extend_from_slice(b"\\r"),
            b'\t' => buf.extend_from_slice(b"\\t"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                buf.extend_from_slice(b"\\u00");
                buf.push(HEX[usize::from(b >> 4)]);
                buf.push(HEX[usize::from(b & 0xf)]);
            }
        }
        from = i + 1;
    }
    buf.extend_from_slice(&bytes[from..]);
    buf.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use perago_schema::Code;
    use serde::Serialize;

    /// The record as serde_json writes it: what the report's JSON must be, byte for byte.
    #[derive(Serialize)]
    struct JsonDocument<'a> {
        file: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        line: Option<usize>,
        valid: bool,
        violations: &'a [Violation],
    }

    fn reported(format: Format, docs: &[Checked<'_>]) -> String {
        let mut report = Report::new(Vec::new(), format);
        for doc in docs {
            report.document(doc).unwrap();
        }
        report.flush().unwrap();
        assert_eq!(report.documents, docs.len());
        String::from_utf8(report.out).unwrap()
    }

    fn docs() -> Vec<Checked<'static>> {
        let every_char: String = (0u32..0x80)
            .chain([0xe9, 0x2028, 0xfeff, 0x1f600])
            .filter_map(char::from_u32)
            .collect();
        let violations = vec![
            Violation::new("$", Code::MalformedJson, "malformed JSON: EOF at line 1"),
            Violation::new("$['odd \"key\"']", Code::UnknownField, "unknown field"),
            Violation::new("$.a[12]", Code::Pattern, every_char),
        ];
        vec![
            Checked {
                file: "docs.jsonl",
                text: b"{}",
                line: Some(1),
                error_line: None,
                violations: Vec::new(),
            },
            Checked {
                file: "docs.jsonl",
                text: b"{}",
                line: Some(1_234_567_890),
                error_line: None,
                violations: violations.clone(),
            },
            Checked {
                file: "dir/\"quoted\"\\name\t.json",
                text: b"{}",
                line: None,
                error_line: Some(3),
                violations: violations[..1].to_vec(),
            },
            Checked {
                file: "<stdin>",
                text: b"{}",
                line: Some(0),
                error_line: None,
                violations: Vec::new(),
            },
        ]
    }

    #[test]
    fn json_is_what_serde_json_writes() {
        let docs = docs();
        let mut expected = String::new();
        for doc in &docs {
            let record = JsonDocument {
                file: doc.file,
                line: doc.line,
                valid: doc.violations.is_empty(),
                violations: &doc.violations,
            };
            expected.push_str(&serde_json::to_string(&record).unwrap());
            expected.push('\n');
        }
        assert_eq!(reported(Format::Json, &docs), expected);
    }

    #[test]
    fn text_is_one_line_per_violation() {
        let docs = docs();
        let mut expected = String::new();
        for doc in &docs {
            let line = doc.line.or(doc.error_line).unwrap();
            for v in &doc.violations {
                expected.push_str(&format!("{}:{line}: {}: {}\n", doc.file, v.path, v.message));
            }
        }
        assert_eq!(reported(Format::Text, &docs), expected);
        assert!(expected.starts_with(
            "docs.jsonl:1234567890: $: malformed JSON: EOF at line 1\n\
             docs.jsonl:1234567890: $['odd \"key\"']: unknown field\n"
        ));
    }

    #[test]
    fn numbers_are_written_in_decimal() {
        let numbers = [0, 7, 10, 99, 100, 101, 999, 1000, 65_536, 1_234_567_890];
        for n in numbers.into_iter().chain([usize::MAX]) {
            let mut buf = Vec::new();
            decimal(&mut buf, n);
            assert_eq!(String::from_utf8(buf).unwrap(), n.to_string());
        }
    }

    #[test]
    fn a_full_buffer_is_written_out_before_the_flush() {
        let doc = &docs()[1];
        let mut report = Report::new(Vec::new(), Format::Json);
        while report.out.is_empty() {
            report.document(doc).unwrap();
        }
        assert!(report.out.len() >= BUFFER);
        report.flush().unwrap();
        let text = String::from_utf8(report.out).unwrap();
        assert_eq!(text.lines().count(), report.documents);
    }
}
