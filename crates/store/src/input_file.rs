//! Reading files a user names (core libraries, object files, logs, replay,
//! gate and corpus files, hostfiles, checkpoint files) without blocking on a
//! FIFO or reading a device forever: every input is opened without blocking,
//! checked to be a regular file on the open descriptor (so a path swapped
//! after a check cannot slip through), and read up to a bound.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What kind of file `kind` is, in words, unless it is a regular file.
fn not_regular(kind: std::fs::FileType) -> Option<&'static str> {
    if kind.is_file() {
        None
    } else if kind.is_dir() {
        Some("a directory")
    } else if kind.is_fifo() {
        Some("a FIFO")
    } else if kind.is_socket() {
        Some("a socket")
    } else if kind.is_char_device() || kind.is_block_device() {
        Some("a device")
    } else {
        Some("not a regular file")
    }
}

/// Opens `path` with `options` and the `open(2)` flags `flags` (plus
/// `O_NONBLOCK`, so that opening a FIFO cannot wait for a writer) and
/// refuses, naming the file, anything that is not a regular file once open.
/// Errors name the path, except `ELOOP` (a link refused by `O_NOFOLLOW`),
/// left as the system gave it.
pub fn open_regular(options: &mut OpenOptions, path: &Path, flags: i32) -> io::Result<File> {
    let named =
        |error: io::Error| io::Error::new(error.kind(), format!("{}: {error}", path.display()));
    let file = options
        .custom_flags(flags | libc::O_NONBLOCK)
        .open(path)
        .map_err(|error| {
            if error.raw_os_error() == Some(libc::ELOOP) {
                error
            } else {
                named(error)
            }
        })?;
    if let Some(is) = not_regular(file.metadata().map_err(named)?.file_type()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is {is}, not a regular file", path.display()),
        ));
    }
    Ok(file)
}

/// Fails unless `path` names a regular file (after following symlinks),
/// found without reading it: a FIFO, a device such as `/dev/zero` or a
/// directory is refused before anything could block on it or read it forever.
/// `what` names the file in the message (e.g. "core library").
///
/// ```
/// use std::path::Path;
/// use cmc_store::input_file::check_regular_file;
///
/// let refused = check_regular_file(Path::new("/dev/zero"), "glue log").unwrap_err();
/// assert_eq!(refused, "the glue log /dev/zero is a device: give a regular file");
/// ```
pub fn check_regular_file(path: &Path, what: &str) -> Result<(), String> {
    open_regular_file(path, what).map(drop)
}

/// `path` opened for reading, if it is a regular file (see [`check_regular_file`]).
pub fn open_regular_file(path: &Path, what: &str) -> Result<File, String> {
    let metadata = std::fs::metadata(path)
        .map_err(|problem| format!("cannot read the {what} {}: {problem}", path.display()))?;
    if let Some(is) = not_regular(metadata.file_type()) {
        return Err(format!(
            "the {what} {} is {is}: give a regular file",
            path.display()
        ));
    }
    // The path may have been replaced since: the open file is checked again.
    open_regular(OpenOptions::new().read(true), path, 0)
        .map_err(|problem| format!("cannot read the {what} {}: {problem}", path.display()))
}

/// The bytes of the regular file at `path`, at most `max_bytes` of them (a
/// larger file is refused). See [`check_regular_file`].
///
/// ```
/// use cmc_store::input_file::read_regular_file;
///
/// let path = std::env::temp_dir().join(format!("cmc-doc-{}.log", std::process::id()));
/// std::fs::write(&path, b"four")?;
/// assert_eq!(read_regular_file(&path, "log", 4)?, b"four");
/// let refused = read_regular_file(&path, "log", 3).unwrap_err();
/// assert!(refused.ends_with("is larger than 3 bytes"), "{refused}");
/// std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_regular_file(path: &Path, what: &str, max_bytes: u64) -> Result<Vec<u8>, String> {
    let file = open_regular_file(path, what)?;
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|problem| format!("cannot read the {what} {}: {problem}", path.display()))?;
    if bytes.len() as u64 > max_bytes {
        return Err(format!(
            "the {what} {} is larger than {max_bytes} bytes",
            path.display()
        ));
    }
    Ok(bytes)
}

/// The text of the regular file at `path` (see [`read_regular_file`]), which
/// must be UTF-8.
pub fn read_text_file(path: &Path, what: &str, max_bytes: u64) -> Result<String, String> {
    String::from_utf8(read_regular_file(path, what, max_bytes)?).map_err(|problem| {
        format!(
            "the {what} {} is not UTF-8 text (invalid byte at offset {})",
            path.display(),
            problem.utf8_error().valid_up_to()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_directories_are_refused_without_reading() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("gate.toml");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        for (path, is) in [
            (Path::new("/dev/zero"), "a device"),
            (fifo.as_path(), "a FIFO"),
            (dir.path(), "a directory"),
        ] {
            let refused = read_text_file(path, "gate file", 1 << 20).unwrap_err();
            assert!(refused.contains(is), "{refused}");
        }
    }
}
