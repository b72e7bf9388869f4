#!/usr/bin/env bash
# The project's conventions, as CI checks them: rustfmt and clippy clean
# (cmc-cli also without its default features), and the World and protocols
# crates' rustdoc without a broken link (their examples run as doctests in
# `cargo test`), and documents that cite only files that exist and no
# tracker (scripts/check-citations.sh), and the World crate's functions at
# most 120 lines long (scripts/function-lengths.py).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# A front end without cmc-cli's optional parts (docs/build-and-test-time.md).
cargo clippy -p cmc-cli --no-default-features -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc -p cmc-world -p cmc-protocols --no-deps
bash scripts/check-citations.sh
# The command line's modules import one another without a loop.
bash scripts/module-loops.sh crates/cli/src
# No function of the World crate over 120 lines.
python3 scripts/function-lengths.py crates/world/src --top 1 --limit 120
