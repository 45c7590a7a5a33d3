//! Claiming the trace file, so that one process at a time writes it.
//!
//! Every process of a program that loads the layer reads the same
//! `MACROSCOPE_CAPTURE_FILE`: a launcher and its game, a browser's processes, a GJS
//! program and the desktop portals its session bus starts. Two processes writing one
//! file interleave their chunks, and neither trace reads back. So a process locks the
//! file it writes (`flock`, held until the file is closed); a process that finds it
//! locked writes `<stem>-<pid>.<extension>` beside it instead. A file no process holds
//! is written over, as it was before there was a lock: a program that probes the GPU
//! in a short-lived process before it draws in another (Godot 3 starts two) leaves the
//! trace of the one that drew, not of the probe.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// A trace file this process writes, locked.
#[derive(Debug)]
pub struct Claimed {
    /// The file, open for writing, empty.
    pub file: File,
    /// Its path.
    pub path: PathBuf,
    /// Whether it is the file beside the one named (another process has that).
    pub beside: bool,
}

/// Claims `named` for this process, or, where another process holds it, the file beside
/// it that carries this process's id.
pub fn claim(named: &Path) -> io::Result<Claimed> {
    if let Some(file) = try_claim(named)? {
        return Ok(Claimed {
            file,
            path: named.to_path_buf(),
            beside: false,
        });
    }
    let path = beside(named, std::process::id());
    let file = try_claim(&path)?.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::WouldBlock,
            format!("{} is locked by another process too", path.display()),
        )
    })?;
    Ok(Claimed {
        file,
        path,
        beside: true,
    })
}

/// `<stem>-<pid>.<extension>` in `named`'s folder.
pub fn beside(named: &Path, pid: u32) -> PathBuf {
    let stem = named
        .file_stem()
        .map_or_else(|| "capture".into(), |s| s.to_string_lossy().into_owned());
    let name = match named.extension() {
        Some(ext) => format!("{stem}-{pid}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{pid}"),
    };
    named.with_file_name(name)
}

/// The process whose file beside `named` the file called `name` (in the same folder)
/// is ([`beside`]), if it is one.
pub fn beside_whose(named: &Path, name: &str) -> Option<u32> {
    let stem = named
        .file_stem()
        .map_or("capture".into(), |s| s.to_string_lossy());
    let rest = name.strip_prefix(stem.as_ref())?.strip_prefix('-')?;
    let pid = match named.extension() {
        Some(ext) => rest.strip_suffix(ext.to_str()?)?.strip_suffix('.')?,
        None => rest,
    };
    match pid.bytes().all(|b| b.is_ascii_digit()) {
        true => pid.parse().ok(),
        false => None,
    }
}

/// `path`, opened, locked and emptied; `None` where another process holds its lock. A
/// file system without `flock` leaves the file unlocked, as before there was a lock.
fn try_claim(path: &Path) -> io::Result<Option<File>> {
    // Not truncated on opening: the holder of the lock may be writing it.
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    // SAFETY: flock on a descriptor this function owns; it touches no memory.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let error = io::Error::last_os_error();
        if error.kind() == io::ErrorKind::WouldBlock {
            return Ok(None);
        }
    }
    file.set_len(0)?;
    Ok(Some(file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_second_claim_of_a_locked_file_writes_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let named = dir.path().join("game.mscope");
        let mut first = claim(&named).unwrap();
        assert_eq!(
            (first.path.as_path(), first.beside),
            (named.as_path(), false)
        );
        first.file.write_all(b"first").unwrap();
        // Another open file description locks apart, as another process's does.
        let second = claim(&named).unwrap();
        assert!(second.beside);
        assert_eq!(second.path, beside(&named, std::process::id()));
        // The first file was neither truncated nor written by the second claim.
        assert_eq!(std::fs::read(&named).unwrap(), b"first");
        drop(first);
        // Unlocked again (its writer closed it): the next claim takes it, emptied.
        let third = claim(&named).unwrap();
        assert!(!third.beside);
        assert_eq!(std::fs::metadata(&named).unwrap().len(), 0);
    }

    #[test]
    fn the_file_beside_keeps_the_extension_and_the_folder() {
        let named = Path::new("/traces/run.mscope");
        assert_eq!(beside(named, 42), Path::new("/traces/run-42.mscope"));
        assert_eq!(beside(Path::new("out"), 7), Path::new("out-7"));
        // And back: the process a file beside is of, and no other file.
        assert_eq!(beside_whose(named, "run-42.mscope"), Some(42));
        assert_eq!(beside_whose(Path::new("out"), "out-7"), Some(7));
        for other in [
            "run.mscope",
            "run-x.mscope",
            "run-42.msr",
            "runs-42.mscope",
            "run-.mscope",
        ] {
            assert_eq!(beside_whose(named, other), None, "{other}");
        }
    }
}
