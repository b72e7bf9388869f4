#!/usr/bin/env bash
# Every test of the workspace, as CI runs it (release mode: the calibration
# tests explore millions of states).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo test --workspace --release
# Real crates' loom suites, unchanged from the registry, on cmc (crates/loom).
bash scripts/loom-suites.sh
