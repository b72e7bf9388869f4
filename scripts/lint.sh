#!/usr/bin/env bash
# The project's conventions, as CI checks them: rustfmt and clippy clean.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
