//! Reading files a user names (core libraries, object files, logs, replay
//! files) without blocking on a FIFO or reading a device forever.

use std::io::Read;
use std::path::Path;

/// Fails unless `path` names a regular file (after following symlinks),
/// found without opening it: a FIFO, a device such as `/dev/zero` or a
/// directory is refused before anything could block on it or read it forever.
/// `what` names the file in the message (e.g. "core library").
///
/// ```
/// use std::path::Path;
/// use cmc_world::core::input_file::check_regular_file;
///
/// let refused = check_regular_file(Path::new("/dev/zero"), "glue log").unwrap_err();
/// assert_eq!(refused, "the glue log /dev/zero is a device: give a regular file");
/// ```
pub fn check_regular_file(path: &Path, what: &str) -> Result<(), String> {
    let metadata = std::fs::metadata(path)
        .map_err(|problem| format!("cannot read the {what} {}: {problem}", path.display()))?;
    let kind = metadata.file_type();
    if kind.is_file() {
        return Ok(());
    }
    let is = if kind.is_dir() {
        "a directory"
    } else {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else {
            "not a regular file"
        }
    };
    Err(format!(
        "the {what} {} is {is}: give a regular file",
        path.display()
    ))
}

/// The bytes of the regular file at `path`, at most `max_bytes` of them (a
/// larger file is refused). See [`check_regular_file`].
///
/// ```
/// use cmc_world::core::input_file::read_regular_file;
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
    check_regular_file(path, what)?;
    let cannot =
        |problem: std::io::Error| format!("cannot read the {what} {}: {problem}", path.display());
    let file = std::fs::File::open(path).map_err(cannot)?;
    // The path may have been replaced between the check and the open.
    if !file.metadata().map_err(cannot)?.is_file() {
        return Err(format!(
            "the {what} {} is not a regular file",
            path.display()
        ));
    }
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > max_bytes {
        return Err(format!(
            "the {what} {} is larger than {max_bytes} bytes",
            path.display()
        ));
    }
    Ok(bytes)
}
