//! The files a command reads and writes, checked before any work is done:
//! a replay file is read only if it is a regular file of bounded size, and
//! the replay file a check writes may not overwrite one of its inputs.

use std::io::Read;
use std::path::{Path, PathBuf};

use cmc_world::core::input_file::read_text_file;

use crate::args::CheckArgs;

/// Largest replay file read, in bytes.
pub const REPLAY_FILE_MAX_BYTES: u64 = 64 << 20;
/// Largest gate file, corpus manifest or hostfile read, in bytes.
pub const TEXT_INPUT_MAX_BYTES: u64 = 16 << 20;

/// The text of the input file at `path`, named `what` in messages: a
/// regular file (a FIFO, device or directory is refused without being read)
/// of at most [`TEXT_INPUT_MAX_BYTES`], in UTF-8. Every text file the
/// command line reads comes through here or [`read_replay_file`].
pub fn read_text_input(path: &Path, what: &str) -> Result<String, String> {
    read_text_file(path, what, TEXT_INPUT_MAX_BYTES)
}

/// The text of the replay file at `path`: as [`read_text_input`], of at
/// most [`REPLAY_FILE_MAX_BYTES`].
pub fn read_replay_file(path: &Path) -> Result<String, String> {
    read_text_file(path, "replay file", REPLAY_FILE_MAX_BYTES)
}

/// The files and directories a check reads: its core libraries, the
/// checkpoint and resume directories, and the trace walks start from. (The
/// trace directory holds only files the run names uniquely: an output may go
/// inside it, as into the system's temporary folder.)
pub fn check_inputs(args: &CheckArgs) -> Vec<PathBuf> {
    let libraries = args
        .cores
        .iter()
        .filter(|core| !core.starts_with("rust:"))
        .map(PathBuf::from);
    let dirs = [&args.checkpoint, &args.resume, &args.walks_from]
        .into_iter()
        .flatten()
        .cloned();
    libraries.chain(dirs).collect()
}

/// `path` made absolute with its symlinks resolved, as far as it exists.
pub(crate) fn resolved(path: &Path) -> PathBuf {
    if let Ok(path) = path.canonicalize() {
        return path;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => resolved(parent).join(name),
        _ => std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
    }
}

/// Whether the file at `path` starts like a replay file (so overwriting it
/// with a new one loses nothing that is not a trace).
fn is_replay_file(path: &Path) -> bool {
    let mut start = Vec::new();
    let read = std::fs::File::open(path).and_then(|file| file.take(4096).read_to_end(&mut start));
    read.is_ok()
        && String::from_utf8_lossy(&start)
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty() && !line.starts_with('#'))
            .is_some_and(|line| line.starts_with("cmc-replay "))
}

/// Fails if writing a replay file at `target` could destroy an input: when
/// it is one of `inputs` or lies inside one (a directory), or when it exists
/// and is not a regular file that already holds a replay file.
pub fn check_replay_out(target: &Path, inputs: &[PathBuf]) -> Result<(), String> {
    let refuse = |why: String| {
        Err(format!(
            "refusing to write the replay file {}: {why} (choose another with --replay-out)",
            target.display()
        ))
    };
    let resolved_target = resolved(target);
    for input in inputs {
        if resolved_target.starts_with(resolved(input)) {
            return refuse(format!("it would overwrite the input {}", input.display()));
        }
    }
    if let Ok(metadata) = std::fs::metadata(target) {
        if !metadata.is_file() {
            return refuse("it exists and is not a regular file".into());
        }
        if !is_replay_file(target) {
            return refuse("it exists and is not a cmc replay file".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_file_never_overwrites_an_input() {
        let dir = tempfile::tempdir().unwrap();
        let library = dir.path().join("libcore.so");
        let source = dir.path().join("core.c");
        let old_trace = dir.path().join("old.cmc-trace");
        std::fs::write(&library, b"\x7fELF").unwrap();
        std::fs::write(&source, "int x;").unwrap();
        std::fs::write(&old_trace, "# cmc replay file\ncmc-replay 2\n").unwrap();
        let checkpoints = dir.path().join("checkpoints");
        std::fs::create_dir(&checkpoints).unwrap();
        let inputs = vec![library.clone(), checkpoints.clone()];

        for (target, why) in [
            (library.clone(), "overwrite the input"),
            (
                dir.path().join(".").join("libcore.so"),
                "overwrite the input",
            ),
            (checkpoints.join("meta"), "overwrite the input"),
            (checkpoints.clone(), "overwrite the input"),
            (source, "not a cmc replay file"),
            (PathBuf::from("/dev/null"), "not a regular file"),
        ] {
            let error = check_replay_out(&target, &inputs).unwrap_err();
            assert!(error.contains(why), "{}: {error}", target.display());
        }
        assert_eq!(check_replay_out(&old_trace, &inputs), Ok(()));
        assert_eq!(
            check_replay_out(&dir.path().join("new.cmc-trace"), &inputs),
            Ok(())
        );
    }

    #[test]
    fn replay_files_must_be_regular_bounded_utf8_files() {
        let dir = tempfile::tempdir().unwrap();
        let binary = dir.path().join("binary.cmc");
        std::fs::write(&binary, b"cmc-replay 2\n\xff\n").unwrap();
        for (path, why) in [
            (PathBuf::from("/dev/zero"), "a device"),
            (dir.path().to_path_buf(), "a directory"),
            (binary, "not UTF-8"),
        ] {
            let error = read_replay_file(&path).unwrap_err();
            assert!(error.contains(why), "{}: {error}", path.display());
        }
    }
}
