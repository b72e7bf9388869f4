#!/usr/bin/env bash
# The project's conventions, as CI checks them: rustfmt and clippy clean, and
# the World crate's rustdoc without a broken link (its examples run as doctests
# in `cargo test`).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc -p cmc-world --no-deps
