#!/usr/bin/env bash
# Every test of the workspace, as CI runs it (release mode: the calibration
# tests explore millions of states).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo test --workspace --release
# Real crates' loom suites, unchanged from the registry, on cmc (crates/loom).
bash scripts/loom-suites.sh
# loom 0.5's API (crates/loom05, outside the workspace: a second package named loom).
cargo test --release --manifest-path crates/loom05/Cargo.toml --target-dir target
# omnipaxos 0.2.0 (the release with the bug) cannot share the workspace's
# lock file with 0.2.1: its package has its own workspace, built into the
# same target directory.
cargo test --release --manifest-path targets/omnipaxos/v0_2_0/Cargo.toml --target-dir target
