//! Reading documents with a size limit: every command that reads a document (a task input, a
//! document to validate, a completion payload) holds at most the limit in memory and says
//! which setting to raise when a document is larger.

use std::fmt;
use std::io::{self, BufRead, Read};

/// The variable that sets the document limit of every command (`--max-document-bytes` wins).
pub const MAX_DOCUMENT_BYTES_VAR: &str = "PERAGO_MAX_DOCUMENT_BYTES";

/// The default document limit: 64 MiB, well above Conductor's own 10 MB ceiling on a task's
/// input or output.
pub const DEFAULT_MAX_DOCUMENT_BYTES: u64 = 64 * 1024 * 1024;

/// The document limit: `flag` (`--max-document-bytes`), else [`MAX_DOCUMENT_BYTES_VAR`]
/// through `lookup`, else the default. `Err` names the bad setting.
pub fn document_limit(
    flag: Option<&str>,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<u64, String> {
    match flag {
        Some(value) => parse_size(value).map_err(|e| format!("--max-document-bytes: {e}")),
        None => match lookup(MAX_DOCUMENT_BYTES_VAR).filter(|v| !v.trim().is_empty()) {
            Some(value) => parse_size(&value).map_err(|e| format!("{MAX_DOCUMENT_BYTES_VAR}: {e}")),
            None => Ok(DEFAULT_MAX_DOCUMENT_BYTES),
        },
    }
}

/// A document larger than the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the document is larger than the limit of {} (raise it with --max-document-bytes or \
     {MAX_DOCUMENT_BYTES_VAR})",
    Size(*limit)
)]
pub struct TooLarge {
    /// The limit, in bytes.
    pub limit: u64,
}

/// Why a document could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The document is larger than the limit; nothing more was read.
    #[error(transparent)]
    TooLarge(#[from] TooLarge),
    /// The reader failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Reads all of `reader`, or fails as soon as it holds more than `limit` bytes.
pub fn read_document(reader: impl Read, limit: u64) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(TooLarge { limit }.into());
    }
    Ok(bytes)
}

/// Reads the document file at `path`, or standard input for `-`, of at most `limit` bytes.
pub fn read_path(path: &std::path::Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    if path.as_os_str() == "-" {
        read_document(io::stdin().lock(), limit)
    } else {
        read_document(std::fs::File::open(path)?, limit)
    }
}

/// One line of a JSON Lines input, without its `\n` (and `\r\n`).
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// The line's bytes.
    Text(Vec<u8>),
    /// A line longer than the limit: it was skipped, never held whole.
    TooLarge(TooLarge),
}

/// Reads the next line of `reader` into memory of at most `limit` bytes; `None` at the end.
/// A longer line is read through and dropped, so the lines after it are still read.
pub fn read_line(reader: &mut impl BufRead, limit: u64) -> io::Result<Option<Line>> {
    let mut line = Vec::new();
    Ok(match next_line(reader, limit, &mut line)? {
        None => None,
        Some(Ok(())) => Some(Line::Text(line)),
        Some(Err(e)) => Some(Line::TooLarge(e)),
    })
}

/// [`read_line`] into `line`, a buffer kept from one line to the next (a stream of lines then
/// allocates only for its longest one): `None` at the end, `Some(Err)` for a line over the
/// limit, which is read through and not kept.
pub fn next_line(
    reader: &mut impl BufRead,
    limit: u64,
    line: &mut Vec<u8>,
) -> io::Result<Option<Result<(), TooLarge>>> {
    line.clear();
    let mut too_large = false;
    let mut any = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        any = true;
        let (chunk, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_large {
            if (line.len() + chunk.len()) as u64 > limit {
                too_large = true;
                *line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            break;
        }
    }
    if !any {
        return Ok(None);
    }
    if too_large {
        return Ok(Some(Err(TooLarge { limit })));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(Ok(())))
}

/// Parses a size: a whole number of bytes, or one with a unit, `KB` `MB` `GB` (powers of 1000)
/// or `KiB` `MiB` `GiB` (powers of 1024), case-insensitive, a space allowed: `64MiB`, `10 MB`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" | "k" => 1000,
        "mb" | "m" => 1000 * 1000,
        "gb" | "g" => 1000 * 1000 * 1000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => return Err(size_error(text)),
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .filter(|n| *n > 0)
        .ok_or_else(|| size_error(text))
}

fn size_error(text: &str) -> String {
    format!("expected a size such as 64MiB, 10MB or 1000000, got {text:?}")
}

/// A byte count as people read it: `64 MiB`, `1500 bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Size(u64);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
            if n >= 1 << shift && n.is_multiple_of(1 << shift) {
                return write!(f, "{} {unit}", n >> shift);
            }
        }
        write!(f, "{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size(" 10 MB "), Ok(10_000_000));
        assert_eq!(parse_size("2gib"), Ok(2 << 30));
        for bad in [
            "",
            "0",
            "MiB",
            "1.5MiB",
            "-1",
            "10 parsecs",
            "99999999999999999999",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(Size(64 << 20).to_string(), "64 MiB");
        assert_eq!(Size(1500).to_string(), "1500 bytes");
    }

    #[test]
    fn documents_over_the_limit_are_refused_after_reading_one_byte_more() {
        assert_eq!(read_document(&b"12345"[..], 5).unwrap(), b"12345");
        let e = read_document(io::repeat(b'0'), 1 << 20).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the document is larger than the limit of 1 MiB (raise it with \
             --max-document-bytes or PERAGO_MAX_DOCUMENT_BYTES)"
        );
    }

    #[test]
    fn lines_over_the_limit_are_skipped_whole() {
        let text = b"{\"a\":1}\r\n0123456789abc\n\nlast";
        let mut reader = io::BufReader::with_capacity(4, &text[..]);
        let mut lines = Vec::new();
        while let Some(line) = read_line(&mut reader, 10).unwrap() {
            lines.push(line);
        }
        assert_eq!(
            lines,
            [
                Line::Text(b"{\"a\":1}".to_vec()),
                Line::TooLarge(TooLarge { limit: 10 }),
                Line::Text(Vec::new()),
                Line::Text(b"last".to_vec()),
            ]
        );
    }
}
