//! The tutorials of `docs/` run as written: every file they show is
//! written, every `$` command run in an empty directory, and each command's
//! exit code and shown output checked (`tests/markdown/mod.rs`).

mod common;
mod markdown;

use std::hash::{Hash, Hasher};
use std::path::Path;

use common::repository;

/// `PATH` with the directory of the `cmc` under test first.
fn path_with_cmc() -> String {
    let cmc = Path::new(env!("CARGO_BIN_EXE_cmc"));
    format!(
        "{}:{}",
        cmc.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn the_c_tutorial_runs_as_written() {
    let document = "docs/tutorial-c.md";
    let text = std::fs::read_to_string(repository().join(document)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let include = repository().join("include").canonicalize().unwrap();
    let env = [
        ("PATH", path_with_cmc()),
        ("CMC_INCLUDE", include.display().to_string()),
    ];
    markdown::run_tutorial(document, &text, dir.path(), &env, |_| {});
}

#[test]
fn the_rust_tutorial_runs_as_written() {
    let document = "docs/tutorial-rust.md";
    let text = std::fs::read_to_string(repository().join(document)).unwrap();
    // The tutorial works next to a checkout of cmc called `cmc`, here in a
    // directory of its own that keeps its path from run to run (a path
    // dependency's path is part of its build's identity, so the builds kept
    // in `target/tutorial` are reused only from the same place).
    let repository = repository().canonicalize().unwrap();
    let dir = std::env::temp_dir().join(format!("cmc-tutorial-rust-{:016x}", {
        let mut hasher = std::hash::DefaultHasher::new();
        repository.hash(&mut hasher);
        hasher.finish()
    }));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::symlink(&repository, dir.join("cmc")).unwrap();
    // Its builds are kept between runs, and its dependencies pinned to the
    // versions this workspace is tested with (the reader's `cargo` picks the
    // newest ones instead).
    let env = [(
        "CARGO_TARGET_DIR",
        repository.join("target/tutorial").display().to_string(),
    )];
    let lock = repository.join("Cargo.lock");
    markdown::run_tutorial(document, &text, &dir, &env, |file| {
        if file.ends_with("Cargo.toml") {
            std::fs::copy(&lock, file.with_file_name("Cargo.lock")).unwrap();
        }
    });
}
