//! How `perago validate` reports each document: `FILE:LINE: $.path: message` lines, or one
//! JSON object per document.

use crate::locate;
use clap::ValueEnum;
use perago_schema::Violation;
use serde::Serialize;
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

/// Writes each document's report and counts them.
#[derive(Debug)]
pub struct Report<W> {
    out: W,
    format: Format,
    /// Documents reported.
    pub documents: usize,
    /// Documents with a violation.
    pub invalid: usize,
}

#[derive(Serialize)]
struct JsonDocument<'a> {
    file: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    valid: bool,
    violations: &'a [Violation],
}

impl<W: Write> Report<W> {
    /// A report written to `out`.
    pub fn new(out: W, format: Format) -> Self {
        Report {
            out,
            format,
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
            Format::Json => {
                let json = JsonDocument {
                    file: doc.file,
                    line: doc.line,
                    valid: doc.violations.is_empty(),
                    violations: &doc.violations,
                };
                serde_json::to_writer(&mut self.out, &json)?;
                writeln!(self.out)
            }
            Format::Text => {
                if doc.violations.is_empty() {
                    return Ok(());
                }
                let lines = match doc.line.or(doc.error_line) {
                    Some(line) => vec![line; doc.violations.len()],
                    None => {
                        let paths: Vec<&str> =
                            doc.violations.iter().map(|v| v.path.as_str()).collect();
                        locate::lines(doc.text, &paths)
                    }
                };
                for (v, line) in doc.violations.iter().zip(lines) {
                    writeln!(self.out, "{}:{line}: {}: {}", doc.file, v.path, v.message)?;
                }
                Ok(())
            }
        }
    }

    /// Flushes what was written.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
