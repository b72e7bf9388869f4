//! Files opened without following a symbolic link, checksums of their
//! contents and an exclusive lock: what a checkpoint directory needs so that
//! a link planted in it, a file changed behind its back or a second run
//! using it is refused instead of trusted.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// Opens `path` with `options`, refusing a symbolic link as the last
/// component (`O_NOFOLLOW`) and anything but a regular file (see
/// [`crate::input_file::open_regular`]) with an error that names the file.
fn open_with(options: &mut OpenOptions, path: &Path) -> io::Result<File> {
    crate::input_file::open_regular(options, path, libc::O_NOFOLLOW).map_err(|error| {
        if error.raw_os_error() == Some(libc::ELOOP) {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is a symbolic link; cmc does not follow links here",
                    path.display()
                ),
            )
        } else {
            error
        }
    })
}

/// Creates (or truncates) `path` for writing; a symbolic link is refused.
pub fn create(path: &Path) -> io::Result<File> {
    open_with(
        OpenOptions::new().write(true).create(true).truncate(true),
        path,
    )
}

/// Opens `path` for reading; a symbolic link is refused.
pub fn open(path: &Path) -> io::Result<File> {
    open_with(OpenOptions::new().read(true), path)
}

/// Opens `path` for reading and writing, creating it if `create`; a symbolic
/// link is refused.
pub fn open_rw(path: &Path, create: bool) -> io::Result<File> {
    open_with(
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false),
        path,
    )
}

/// Opens (creating it if needed) the lock file `path` and takes an exclusive
/// `flock` on it, held until the returned file is closed; `None` if another
/// process (or another open file) holds it. A symbolic link is refused.
pub fn lock_exclusive(path: &Path) -> io::Result<Option<File>> {
    use std::os::fd::AsRawFd;
    let file = open_rw(path, true)?;
    // SAFETY: flock on a descriptor owned by `file`, which outlives the call.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(Some(file));
    }
    let problem = io::Error::last_os_error();
    if problem.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(None)
    } else {
        Err(io::Error::new(
            problem.kind(),
            format!("cannot lock {}: {problem}", path.display()),
        ))
    }
}

/// Whether `path` is a directory, `false` if nothing is there; a symbolic
/// link (to a directory or not) or another kind of file is refused.
pub fn is_dir(path: &Path) -> io::Result<bool> {
    match std::fs::symlink_metadata(path) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(io::Error::new(
            error.kind(),
            format!("{}: {error}", path.display()),
        )),
        Ok(meta) if meta.file_type().is_dir() => Ok(true),
        Ok(meta) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is {}, not a directory; cmc does not follow links here",
                path.display(),
                if meta.file_type().is_symlink() {
                    "a symbolic link"
                } else {
                    "a file"
                }
            ),
        )),
    }
}

/// The XXH3-128 checksum and length of the contents of `input` from its
/// current position to its end.
pub fn digest(input: &mut impl Read) -> io::Result<(u128, u64)> {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut length = 0u64;
    loop {
        let read = input.read(&mut buffer)?;
        if read == 0 {
            return Ok((hasher.digest128(), length));
        }
        hasher.update(&buffer[..read]);
        length += read as u64;
    }
}

/// The XXH3-128 checksum and length of the file at `path` (not a link).
pub fn digest_file(path: &Path) -> io::Result<(u128, u64)> {
    digest(&mut open(path)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, b"contents").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        for error in [
            open(&link).unwrap_err(),
            create(&link).unwrap_err(),
            open_rw(&link, true).unwrap_err(),
            is_dir(&link).unwrap_err(),
        ] {
            let message = error.to_string();
            assert!(
                message.contains("link") && message.contains("symbolic"),
                "{message}"
            );
        }
        assert_eq!(std::fs::read(&target).unwrap(), b"contents");
        assert!(!is_dir(&dir.path().join("missing")).unwrap());
        assert!(is_dir(dir.path()).unwrap());
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("manifest");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        for error in [
            open(&fifo).unwrap_err(),
            open_rw(&fifo, false).unwrap_err(),
            digest_file(&fifo).unwrap_err(),
        ] {
            assert!(error.to_string().contains("is a FIFO"), "{error}");
        }
    }

    #[test]
    fn a_lock_is_exclusive_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let held = lock_exclusive(&path).unwrap().expect("free");
        assert!(lock_exclusive(&path).unwrap().is_none());
        drop(held);
        assert!(lock_exclusive(&path).unwrap().is_some());
    }

    #[test]
    fn digests_change_with_any_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("file");
        std::fs::write(&path, b"abcdef").unwrap();
        let before = digest_file(&path).unwrap();
        assert_eq!(before.1, 6);
        std::fs::write(&path, b"abcdeg").unwrap();
        assert_ne!(digest_file(&path).unwrap(), before);
    }
}
