//! The local store's file primitives: temporary files, durable atomic writes (write, fsync,
//! rename, fsync the directory), exclusive lock files, and copying while hashing.

use crate::store::{Result, StoreError};
use sha2::{Digest, Sha256};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The size of the copy buffer.
pub(crate) const BUFFER: usize = 256 * 1024;

/// A unique name for a temporary file of this process (pid, a counter, the clock), under `tmp`.
pub(crate) fn temp_path(tmp: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    tmp.join(format!("{}-{n}-{nanos:08x}.tmp", std::process::id()))
}

/// A temporary file, removed when dropped unless [`Temp::persist`]ed.
#[derive(Debug)]
pub(crate) struct Temp {
    path: PathBuf,
    done: bool,
}

impl Temp {
    /// Creates a new temporary file under `tmp`.
    pub(crate) fn create(tmp: &Path) -> Result<(Temp, File)> {
        let path = temp_path(tmp);
        let file = File::create_new(&path)
            .map_err(|e| StoreError::io(format!("creating {}", path.display()), e))?;
        Ok((Temp { path, done: false }, file))
    }

    /// The temporary file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Renames it to `dest` (replacing `dest` atomically); creates `dest`'s directory, and then
    /// syncs that directory's parent, when it is missing.
    pub(crate) fn persist(mut self, dest: &Path) -> Result<()> {
        let renamed = match fs::rename(&self.path, dest) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                create_dir_durably(parent(dest))?;
                fs::rename(&self.path, dest)
            }
            other => other,
        };
        renamed.map_err(|e| {
            StoreError::io(
                format!("renaming {} to {}", self.path.display(), dest.display()),
                e,
            )
        })?;
        self.done = true;
        Ok(())
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.done {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// `path`'s parent directory (`path` itself when it has none).
pub(crate) fn parent(path: &Path) -> &Path {
    path.parent().unwrap_or(path)
}

/// fsync of directory `dir`, so that the renames and creations in it are durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StoreError::io(format!("syncing directory {}", dir.display()), e))
}

/// Creates `dir` and its missing ancestors, syncing each new directory's parent.
pub(crate) fn create_dir_durably(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(up) = dir.parent() {
        create_dir_durably(up)?;
    }
    match fs::create_dir(dir) {
        Ok(()) => sync_dir(parent(dir)),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StoreError::io(format!("creating {}", dir.display()), e)),
    }
}

/// Writes `bytes` to `dest` so that a crash leaves either the old file or the new one, never a
/// torn one: a temporary file under `tmp`, fsync, rename, fsync of `dest`'s directory.
pub(crate) fn write_atomic(tmp: &Path, dest: &Path, bytes: &[u8]) -> Result<()> {
    let (temp, mut file) = Temp::create(tmp)?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| StoreError::io(format!("writing {}", temp.path().display()), e))?;
    drop(file);
    temp.persist(dest)?;
    sync_dir(parent(dest))
}

/// [`write_atomic`] unless `dest` exists: for content-addressed files, whose content is their
/// name's.
pub(crate) fn write_once(tmp: &Path, dest: &Path, bytes: &[u8]) -> Result<()> {
    match fs::metadata(dest) {
        Ok(meta) if meta.len() == bytes.len() as u64 => Ok(()),
        _ => write_atomic(tmp, dest, bytes),
    }
}

/// Reads `path`; `Ok(None)` when it does not exist.
pub(crate) fn read_optional(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io(format!("reading {}", path.display()), e)),
    }
}

/// An exclusive lock on the file `path` (created when missing), held until dropped. Lock files
/// are never removed, so every process locks the same inode.
pub(crate) fn lock(path: &Path) -> Result<File> {
    let open = || {
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
    };
    let file = match open() {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            create_dir_durably(parent(path))?;
            open()
        }
        other => other,
    }
    .map_err(|e| StoreError::io(format!("opening lock file {}", path.display()), e))?;
    file.lock()
        .map_err(|e| StoreError::io(format!("locking {}", path.display()), e))?;
    Ok(file)
}

/// Copies `reader` to `writer` through `buffer`, hashing what passes: (size, hex SHA-256).
pub(crate) fn copy_hashing(
    reader: &mut impl Read,
    writer: &mut impl Write,
    buffer: &mut [u8],
) -> io::Result<(u64, String)> {
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    loop {
        let n = match reader.read(buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buffer[..n]);
        writer.write_all(&buffer[..n])?;
        size += n as u64;
    }
    Ok((size, super::model::hex(&hasher.finalize())))
}

/// A [`Write`] whose errors are remembered apart from the reader's, so that a copy can tell
/// which side failed.
#[derive(Debug)]
pub(crate) struct Tracked<W> {
    pub(crate) inner: W,
    pub(crate) failed: bool,
}

impl<W: Write> Write for Tracked<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf).inspect_err(|_| self.failed = true)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().inspect_err(|_| self.failed = true)
    }
}
