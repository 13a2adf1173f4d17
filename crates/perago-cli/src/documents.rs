//! Reading the documents a command checks: files, or standard input for `-`, never more than
//! the document limit.

use perago_schema::input::read_path;
use perago_worker::cli::CommandError;
use std::io::{self, Read};
use std::path::Path;

/// Why a command stopped early: a usage, I/O or schema error (exit status 2), or standard
/// output closed by its reader.
pub(crate) type Failure = CommandError;

/// `1 input`, `2 inputs`.
pub(crate) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// How messages name a document file: its path, or `<stdin>` for `-`.
fn name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    }
}

/// Opens a document file, or standard input for `-`; returns its display name and reader.
pub(crate) fn open(path: &Path) -> Result<(String, Box<dyn Read>), String> {
    let name = name(path);
    if path.as_os_str() == "-" {
        return Ok((name, Box::new(io::stdin().lock())));
    }
    match std::fs::File::open(path) {
        Ok(file) => Ok((name, Box::new(file))),
        Err(e) => Err(format!("{name}: {e}")),
    }
}

/// Reads a whole document file, or standard input for `-`, of at most `limit` bytes; returns
/// its display name and bytes.
pub(crate) fn read(path: &Path, limit: u64) -> Result<(String, Vec<u8>), String> {
    let name = name(path);
    match read_path(path, limit) {
        Ok(bytes) => Ok((name, bytes)),
        Err(e) => Err(format!("{name}: {e}")),
    }
}
