//! `std::fs` with a guard: inside a checked execution every call here ends the execution
//! with "I/O is not supported inside a checked execution: <call> at <file:line:col>";
//! outside one it is std's. `shim::fs` switches between this and `std::fs` with the cfg.
//! Methods reached through `Deref` to `std::fs::File` (`metadata`, `set_len`, ...) are not
//! guarded; `Read`, `Write` and `Seek` are.

use crate::rt::refuse_io;
use std::io;
use std::panic::Location;
use std::path::Path;

/// `std::fs::File` whose opening, reads, writes and seeks are refused inside an execution.
#[derive(Debug)]
pub struct File(std::fs::File);

impl File {
    /// `std::fs::File::open`.
    #[track_caller]
    pub fn open<P: AsRef<Path>>(path: P) -> io::Result<File> {
        refuse_io("File::open", Location::caller());
        std::fs::File::open(path).map(File)
    }

    /// `std::fs::File::create`.
    #[track_caller]
    pub fn create<P: AsRef<Path>>(path: P) -> io::Result<File> {
        refuse_io("File::create", Location::caller());
        std::fs::File::create(path).map(File)
    }

    /// The std file.
    pub fn into_std(self) -> std::fs::File {
        self.0
    }
}

impl std::ops::Deref for File {
    type Target = std::fs::File;
    fn deref(&self) -> &std::fs::File {
        &self.0
    }
}

impl std::ops::DerefMut for File {
    fn deref_mut(&mut self) -> &mut std::fs::File {
        &mut self.0
    }
}

crate::rt::refused_read_write!(File, "File");

impl io::Seek for File {
    #[track_caller]
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        refuse_io("File::seek", Location::caller());
        self.0.seek(pos)
    }
}

/// `std::fs::read`.
#[track_caller]
pub fn read<P: AsRef<Path>>(path: P) -> io::Result<Vec<u8>> {
    refuse_io("fs::read", Location::caller());
    std::fs::read(path)
}

/// `std::fs::read_to_string`.
#[track_caller]
pub fn read_to_string<P: AsRef<Path>>(path: P) -> io::Result<String> {
    refuse_io("fs::read_to_string", Location::caller());
    std::fs::read_to_string(path)
}

/// `std::fs::write`.
#[track_caller]
pub fn write<P: AsRef<Path>, C: AsRef<[u8]>>(path: P, contents: C) -> io::Result<()> {
    refuse_io("fs::write", Location::caller());
    std::fs::write(path, contents)
}

/// `std::fs::remove_file`.
#[track_caller]
pub fn remove_file<P: AsRef<Path>>(path: P) -> io::Result<()> {
    refuse_io("fs::remove_file", Location::caller());
    std::fs::remove_file(path)
}

/// `std::fs::create_dir_all`.
#[track_caller]
pub fn create_dir_all<P: AsRef<Path>>(path: P) -> io::Result<()> {
    refuse_io("fs::create_dir_all", Location::caller());
    std::fs::create_dir_all(path)
}

/// `std::fs::metadata`.
#[track_caller]
pub fn metadata<P: AsRef<Path>>(path: P) -> io::Result<std::fs::Metadata> {
    refuse_io("fs::metadata", Location::caller());
    std::fs::metadata(path)
}
