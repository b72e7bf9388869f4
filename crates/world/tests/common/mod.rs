//! The C fixtures of the integration tests, compiled on first use, and
//! helpers to read a World's actions (test cores in Rust are
//! `cmc_world::test_support`'s).
//!
//! The tests build what they load themselves, with the C compiler (`$CC`,
//! default `cc`), from the repository's `cores/` folder into a folder of this
//! test process under cargo's temporary target folder; the crate's build
//! script compiles nothing, so a Rust-only user of `cmc-world` needs no C
//! compiler. Every fixture is compiled with [`C_WARNINGS`], so that
//! `include/cmc.h` and the fixtures stay free of warnings.

#![allow(dead_code)] // each test file uses the fixtures it needs

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use cmc_model::Model;
use cmc_world::system::action::Action;
use cmc_world::system::state::WorldState;
use cmc_world::World;

/// Each fixture: output name, source under `cores/`, flags.
const FIXTURES: &[(&str, &str, &[&str])] = &[
    ("libreqack.so", "reqack/reqack.c", &["-O2", "-shared"]),
    (
        "libreqack_bug1.so",
        "reqack/reqack.c",
        &["-O2", "-shared", "-DCMC_BUG=1"],
    ),
    (
        "libreqack_bug2.so",
        "reqack/reqack.c",
        &["-O2", "-shared", "-DCMC_BUG=2"],
    ),
    ("reqack.o", "reqack/reqack.c", &["-O2", "-c"]),
    (
        "libno_entry.so",
        "test/bad_descriptor.c",
        &["-O2", "-shared", "-DNO_ENTRY"],
    ),
    (
        "libwrong_abi.so",
        "test/bad_descriptor.c",
        &["-O2", "-shared", "-DWRONG_ABI"],
    ),
    (
        "libhuge_state.so",
        "test/bad_descriptor.c",
        &["-O2", "-shared", "-DHUGE_STATE"],
    ),
    (
        "libno_step.so",
        "test/bad_descriptor.c",
        &["-O2", "-shared", "-DNO_STEP"],
    ),
    (
        "liberror_code.so",
        "test/misbehave.c",
        &["-O2", "-shared", "-DERROR_CODE"],
    ),
    (
        "libnondet_static.so",
        "test/misbehave.c",
        &["-O2", "-shared", "-DNONDET_STATIC"],
    ),
    (
        "libnondet_uninit.so",
        "test/misbehave.c",
        &["-O0", "-shared", "-DNONDET_UNINIT"],
    ),
    (
        "libsegv.so",
        "test/misbehave.c",
        &["-O0", "-shared", "-DSEGV"],
    ),
    (
        "libhang.so",
        "test/misbehave.c",
        &["-O0", "-shared", "-DHANG"],
    ),
    (
        "calls_time.o",
        "test/misbehave.c",
        &["-O2", "-c", "-DCALLS_TIME"],
    ),
    (
        "nondet_static.o",
        "test/misbehave.c",
        &["-O2", "-c", "-DNONDET_STATIC"],
    ),
    ("libdice.so", "test/dice.c", &["-O2", "-shared"]),
    ("libvotes.so", "test/votes.c", &["-O2", "-shared"]),
    (
        "libvotes_bug1.so",
        "test/votes.c",
        &["-O2", "-shared", "-DCMC_BUG=1"],
    ),
    (
        "libvotes_forget_message.so",
        "test/votes.c",
        &["-O2", "-shared", "-DFORGET_MESSAGE"],
    ),
    (
        "libvotes_forget_index.so",
        "test/votes.c",
        &["-O2", "-shared", "-DFORGET_INDEX"],
    ),
    (
        "libdice_links.so",
        "test/dice.c",
        &["-O2", "-shared", "-DLINK_PROPS"],
    ),
];

/// Warnings are errors: a fixture or `include/cmc.h` that warns fails the
/// test that builds it.
pub const C_WARNINGS: [&str; 3] = ["-Wall", "-Wextra", "-Werror"];

/// Serialises the compilations of the test threads.
static BUILDING: Mutex<()> = Mutex::new(());

fn cores() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cores")
}

fn out_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("c-fixtures-{}", std::process::id()))
}

/// Runs the C compiler on `source` (under `cores/`) with `flags` into `output`.
fn compile(source: &str, flags: &[&str], output: &Path) {
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let cores = cores();
    let mut command = Command::new(&compiler);
    command
        .arg(format!("-I{}", cores.join("../include").display()))
        .arg(format!("-I{}", cores.join("reqack").display()))
        .arg("-fPIC")
        .args(C_WARNINGS)
        .args(flags)
        .arg(cores.join(source))
        .arg("-o")
        .arg(output);
    let status = command
        .status()
        .unwrap_or_else(|error| panic!("cannot run the C compiler `{compiler}`: {error}"));
    assert!(status.success(), "compiling {source} failed: {command:?}");
}

/// The path of fixture `name` (e.g. `libreqack.so`, `calls_time.o`, the
/// product `reqack_udp`), compiled on first use in this process.
pub fn fixture(name: &str) -> PathBuf {
    let _building = BUILDING.lock().unwrap_or_else(|poison| poison.into_inner());
    built(name)
}

fn built(name: &str) -> PathBuf {
    let dir = out_dir();
    let path = dir.join(name);
    if path.exists() {
        return path;
    }
    std::fs::create_dir_all(&dir).expect("the fixture folder can be created");
    if let Some(glue_bug) = name.strip_prefix("reqack_udp") {
        // The product links the very object the checker loads, unchanged;
        // `reqack_udp_glueN` is built with the broken glue `-DGLUE_BUG=N`.
        let object = built("reqack.o").display().to_string();
        let define = format!("-DGLUE_BUG={}", glue_bug.trim_start_matches("_glue"));
        let mut flags = vec!["-O2", object.as_str()];
        if !glue_bug.is_empty() {
            flags.push(&define);
        }
        compile("product/reqack_udp.c", &flags, &path);
        return path;
    }
    if let Some(variant) = name
        .strip_prefix("libreqack_props")
        .and_then(|rest| rest.strip_suffix(".so"))
    {
        // The reqack core and its properties in C, linked into one library;
        // `libreqack_props_FLAG.so` is built with `-DFLAG`.
        let props = cores().join("test/reqack_props.c").display().to_string();
        let define = format!("-D{}", variant.trim_start_matches('_'));
        let mut flags = vec!["-O2", "-shared", props.as_str()];
        if !variant.is_empty() {
            flags.push(&define);
        }
        compile("reqack/reqack.c", &flags, &path);
        return path;
    }
    let (_, source, flags) = FIXTURES
        .iter()
        .find(|(fixture, _, _)| *fixture == name)
        .unwrap_or_else(|| panic!("no C fixture called {name}"));
    compile(source, flags, &path);
    path
}

/// The initial state of `world` (a World has exactly one).
pub fn initial_state(world: &World) -> WorldState {
    let mut states = Vec::new();
    world.init_states(&mut states);
    states.remove(0)
}

/// The actions enabled in `state`, in the World's order.
pub fn enabled_actions(world: &World, state: &WorldState) -> Vec<Action> {
    let mut actions = Vec::new();
    world.actions(state, &mut actions);
    actions
}

/// The texts of the actions enabled in `state`, in the World's order.
pub fn action_texts(world: &World, state: &WorldState) -> Vec<String> {
    enabled_actions(world, state)
        .iter()
        .map(|action| world.format_action(action))
        .collect()
}

/// The action enabled in `state` whose text is `text` (panics if none is).
pub fn action_named(world: &World, state: &WorldState, text: &str) -> Action {
    enabled_actions(world, state)
        .into_iter()
        .find(|action| world.format_action(action) == text)
        .unwrap_or_else(|| panic!("{text} is not enabled"))
}
