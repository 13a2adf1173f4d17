//! Reading documents with a size limit: every command that reads a document (a task input, a
//! document to validate, a completion payload) holds at most the limit in memory and says
//! which setting to raise when a document is larger.

use std::fmt;
use std::io::{self, Read};

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

/// The lines of a JSON Lines input, each without its `\n` (and `\r\n`). The input is read in
/// blocks of one buffer, kept for the whole input: a line that lies within a block is handed
/// out where it lies, with no copy; one that spans blocks is gathered in a second buffer; one
/// longer than the limit is read through and skipped, never held whole. Memory stays that of
/// the block and the longest line, whatever the input's length.
#[derive(Debug)]
pub struct Lines<R> {
    reader: R,
    block: Vec<u8>,
    /// The unread bytes of the block: `block[start..end]`.
    start: usize,
    end: usize,
    /// Where the next `\n` is in the block, when [`ready`](Self::ready) has found it.
    newline: Option<usize>,
    /// A line that spans blocks.
    long: Vec<u8>,
    limit: u64,
    /// The reader is exhausted.
    eof: bool,
}

/// How much of the input one read takes.
const BLOCK: usize = 64 * 1024;

impl<R: Read> Lines<R> {
    /// The lines of `reader`, none longer than `limit` bytes.
    pub fn new(reader: R, limit: u64) -> Self {
        Lines::with_block(reader, limit, BLOCK)
    }

    /// [`new`](Self::new), reading `block` bytes at a time.
    pub fn with_block(reader: R, limit: u64, block: usize) -> Self {
        Lines {
            reader,
            block: vec![0; block.max(1)],
            start: 0,
            end: 0,
            newline: None,
            long: Vec::new(),
            limit,
            eof: false,
        }
    }

    /// True when the next line can be handed out without reading: a caller that writes as it
    /// goes flushes what it wrote when this is false, before the read waits for more input.
    pub fn ready(&mut self) -> bool {
        if self.newline.is_none() {
            self.newline =
                memchr::memchr(b'\n', &self.block[self.start..self.end]).map(|i| self.start + i);
        }
        self.newline.is_some() || self.eof
    }

    /// The next line: `None` at the end, `Some(Err)` for a line over the limit, which was read
    /// through and not kept.
    pub fn next_line(&mut self) -> io::Result<Option<Result<&[u8], TooLarge>>> {
        // Whether the line began in an earlier block (and is gathered in `long`), and whether
        // it is already known to be too large.
        let mut spans = false;
        let mut too_large = false;
        self.long.clear();
        loop {
            let newline = match self.newline.take() {
                Some(i) => Some(i),
                None => {
                    memchr::memchr(b'\n', &self.block[self.start..self.end]).map(|i| self.start + i)
                }
            };
            let stop = match newline {
                Some(i) => i,
                None if self.eof => {
                    if !spans && self.start == self.end {
                        return Ok(None);
                    }
                    self.end
                }
                None => {
                    // The line goes on in the next block: keep what this one holds of it.
                    let rest = &self.block[self.start..self.end];
                    if !too_large && !rest.is_empty() {
                        if (self.long.len() + rest.len()) as u64 > self.limit {
                            too_large = true;
                            self.long = Vec::new();
                        } else {
                            self.long.extend_from_slice(rest);
                        }
                    }
                    spans |= !rest.is_empty();
                    self.fill()?;
                    continue;
                }
            };
            let (from, to) = (self.start, stop);
            self.start = (stop + 1).min(self.end);
            if too_large || (self.long.len() + (to - from)) as u64 > self.limit {
                self.long = Vec::new();
                return Ok(Some(Err(TooLarge { limit: self.limit })));
            }
            let line = if spans {
                self.long.extend_from_slice(&self.block[from..to]);
                &self.long[..]
            } else {
                &self.block[from..to]
            };
            return Ok(Some(Ok(line.strip_suffix(b"\r").unwrap_or(line))));
        }
    }

    /// Reads the next block (the current one is used up).
    fn fill(&mut self) -> io::Result<()> {
        self.start = 0;
        self.end = 0;
        loop {
            match self.reader.read(&mut self.block) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end = n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
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

    /// Every line of `text` read `block` bytes at a time from a reader that hands out at most
    /// `chunk` bytes a read: `Some(text)`, or `None` for a line over the limit.
    fn lines(text: &[u8], limit: u64, block: usize, chunk: usize) -> Vec<Option<Vec<u8>>> {
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(buf.len()).min(self.1);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut reader = Lines::with_block(Trickle(text, chunk), limit, block);
        let mut found = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            found.push(line.ok().map(<[u8]>::to_vec));
            reader.ready();
        }
        assert!(reader.ready(), "at the end, nothing is waited for");
        found
    }

    #[test]
    fn lines_over_the_limit_are_skipped_whole() {
        let text = b"{\"a\":1}\r\n0123456789abc\n\nlast";
        let expected = [
            Some(b"{\"a\":1}".to_vec()),
            None,
            Some(Vec::new()),
            Some(b"last".to_vec()),
        ];
        for block in [1, 2, 3, 4, 7, 64, BLOCK] {
            for chunk in [1, 3, usize::MAX] {
                assert_eq!(lines(text, 10, block, chunk), expected, "{block} {chunk}");
            }
        }
    }

    #[test]
    fn lines_end_as_the_input_ends() {
        for block in [1, 2, 5, BLOCK] {
            assert_eq!(lines(b"", 10, block, 2), Vec::<Option<Vec<u8>>>::new());
            assert_eq!(lines(b"\n", 10, block, 2), [Some(Vec::new())]);
            assert_eq!(lines(b"a\n", 10, block, 2), [Some(b"a".to_vec())]);
            assert_eq!(
                lines(b"a\r\n\r\nb\r", 10, block, 2),
                [Some(b"a".to_vec()), Some(Vec::new()), Some(b"b".to_vec())]
            );
            // A CR counts towards the limit; a lone CR inside a line stays.
            assert_eq!(
                lines(b"0123456789\r\nx\ry\n", 10, block, 3),
                [None, Some(b"x\ry".to_vec())]
            );
            assert_eq!(
                lines(b"0123456789", 10, block, 3),
                [Some(b"0123456789".to_vec())]
            );
            assert_eq!(lines(b"0123456789a", 10, block, 3), [None]);
        }
    }

    #[test]
    fn a_line_is_ready_only_when_its_end_was_read() {
        let mut reader = Lines::with_block(&b"one\ntw"[..], 100, 5);
        assert!(!reader.ready(), "nothing read yet");
        assert_eq!(reader.next_line().unwrap(), Some(Ok(&b"one"[..])));
        assert!(!reader.ready(), "`tw` needs more input");
        assert_eq!(reader.next_line().unwrap(), Some(Ok(&b"tw"[..])));
        assert!(reader.ready());
        assert_eq!(reader.next_line().unwrap(), None);
    }
}
