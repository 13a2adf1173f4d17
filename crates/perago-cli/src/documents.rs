//! Reading the documents a command checks: files, or standard input for `-`, never more than
//! the document limit.

use perago_conductor::cli::CommandError;
use perago_schema::input::read_document;
use std::io::{self, Read};
use std::path::Path;

/// Why a command stopped early: a usage, I/O or schema error (exit status 2), or standard
/// output closed by its reader.
pub(crate) type Failure = CommandError;

/// Opens a document file, or standard input for `-`; returns its display name and reader.
pub(crate) fn open(path: &Path) -> Result<(String, Box<dyn Read>), String> {
    if path.as_os_str() == "-" {
        return Ok(("<stdin>".to_owned(), Box::new(io::stdin().lock())));
    }
    let name = path.display().to_string();
    match std::fs::File::open(path) {
        Ok(file) => Ok((name, Box::new(file))),
        Err(e) => Err(format!("{name}: {e}")),
    }
}

/// Reads a whole document file, or standard input for `-`, of at most `limit` bytes; returns
/// its display name and bytes.
pub(crate) fn read(path: &Path, limit: u64) -> Result<(String, Vec<u8>), Failure> {
    let (name, reader) = open(path)?;
    match read_document(reader, limit) {
        Ok(bytes) => Ok((name, bytes)),
        Err(e) => Err(format!("{name}: {e}").into()),
    }
}
