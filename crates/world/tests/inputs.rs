//! A World's record of its C cores: an absolute path that works from any
//! directory, and a digest that refuses a library that has changed.

use std::path::Path;

use cmc_model::Model;
use cmc_world::{build_world, WorldArgs};

mod common;

fn library(name: &str) -> std::path::PathBuf {
    common::fixture(name)
}

#[test]
fn a_core_is_recorded_by_absolute_path_and_a_changed_library_is_refused() {
    let dir = std::env::temp_dir().join(format!("cmc-world-inputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(library("libreqack.so"), dir.join("libcore.so")).unwrap();

    // Typed relative to the directory of the run...
    std::env::set_current_dir(&dir).unwrap();
    let args = WorldArgs {
        cores: vec!["libcore.so".into()],
        nodes: 2,
        params: vec!["requests=1".into()],
        check_determinism: false,
    };
    let params = build_world(&args).unwrap().params();
    let core = params.iter().find(|p| p.name == "core").unwrap();
    assert_eq!(Path::new(&core.value), dir.join("libcore.so"));
    assert!(params
        .iter()
        .any(|p| p.name == "core_digest" && p.value.starts_with("xxh3-128:")));

    // ... and rebuilt from its record in another directory.
    std::env::set_current_dir("/").unwrap();
    let recorded = WorldArgs::from_params(&params).unwrap();
    assert_eq!(build_world(&recorded).unwrap().params(), params);

    // A library rebuilt in between is refused, naming it.
    let replacement = dir.join("libcore.so.new");
    std::fs::copy(library("libreqack_bug2.so"), &replacement).unwrap();
    std::fs::rename(&replacement, dir.join("libcore.so")).unwrap();
    let error = build_world(&recorded).err().unwrap();
    assert!(
        error.contains("libcore.so has changed since it was recorded"),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_purity_gate_accepts_a_shared_library_and_its_offset_table() {
    let report = cmc_world::core::purity::check(&library("libreqack.so")).unwrap();
    assert!(report.is_pure(), "{report}");
    // The gate still sees a writable static in a shared library.
    let report = cmc_world::core::purity::check(&library("libnondet_static.so")).unwrap();
    assert!(!report.is_pure(), "{report}");
}

#[test]
fn the_purity_gate_refuses_files_that_are_not_regular() {
    for (path, is) in [("/dev/zero", "a device"), ("/", "a directory")] {
        let error = cmc_world::core::purity::check(Path::new(path)).unwrap_err();
        assert!(error.contains(is), "{path}: {error}");
    }
}
