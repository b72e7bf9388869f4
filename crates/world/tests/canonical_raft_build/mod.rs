//! Building the canonical/raft adapter (targets/canonical-raft) for the
//! tests, and its World: shared by the test binaries that check it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

use cmc_world::{build_world, WorldArgs};

/// Held by a test while it runs an adapter. libraft's allocator hook
/// (`raft_heap_set`) is process-wide, and each adapter library installs its
/// own: two adapter libraries stepping at once in one process (two tests of
/// one binary) would allocate through each other's arenas.
pub fn one_adapter_at_a_time() -> MutexGuard<'static, ()> {
    static ADAPTER: Mutex<()> = Mutex::new(());
    ADAPTER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Builds the adapter with `flags` into a fresh folder; its library's path.
/// Without flags, the command is targets/canonical-raft/gate.toml's, run
/// where it runs it: the library has the bytes (the digest) the replay
/// files there record.
pub fn adapter(name: &str, flags: &[&str]) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = root.join("targets/canonical-raft");
    let out =
        std::env::temp_dir().join(format!("cmc-canonical-raft-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("temporary folder");
    let library = out.join("libcanonical_raft.so");
    let status = Command::new("cc")
        .current_dir(&target)
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-O2",
            "-fPIC",
            "-shared",
            "-I../../include",
        ])
        .args(flags)
        .args(["raft_core.c", "raft_props.c", "-lraft"])
        .arg("-o")
        .arg(&library)
        .status()
        .expect("cc runs (scripts/setup.sh installs it)");
    assert!(
        status.success(),
        "the adapter builds against libraft-dev (scripts/setup.sh installs it)"
    );
    library
}

/// The World of 3 nodes running the adapter at `library`, with `params`.
pub fn world(library: &Path, params: &[&str]) -> cmc_world::World {
    build_world(&WorldArgs {
        cores: vec![library.display().to_string()],
        nodes: 3,
        params: params.iter().map(|p| p.to_string()).collect(),
        ..WorldArgs::default()
    })
    .expect("the adapter loads as a heap-state core")
}
