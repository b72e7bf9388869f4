#!/usr/bin/env bash
# The project's conventions, as CI checks them: rustfmt and clippy clean, and
# the World and protocols crates' rustdoc without a broken link (their
# examples run as doctests in `cargo test`).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc -p cmc-world -p cmc-protocols --no-deps
