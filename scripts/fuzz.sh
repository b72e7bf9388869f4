#!/usr/bin/env bash
# The long fuzzing run of the cmc front end (the CI test runs 10^4 inputs):
# mutated replay files, command lines, glue logs, gate files, corpus
# manifests and checkpoint manifests through `cmc_cli::run` in-process, each
# of which must end with exit code 0, 1 or 2 (or 4: a stale replay file),
# without a panic or a hang.
#
#   scripts/fuzz.sh [INPUTS] [SEED]     # default 1000000 inputs, seed 7
#
# Prints one line of figures (inputs, time, exit codes, failures) and the
# first failing inputs, if any; exits non-zero if there was one.
set -euo pipefail
cd "$(dirname "$0")/.."
export CMC_FUZZ_INPUTS="${1:-1000000}"
export CMC_FUZZ_SEED="${2:-7}"
exec cargo test --release -p cmc-cli --test fuzz fuzz_long -- --ignored --nocapture
