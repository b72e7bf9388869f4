#!/usr/bin/env bash
# The disk-backed visited set against the in-memory table, side by side:
# two-phase RM=N (default 10) with --max-memory forcing the set to flush.
# Usage: [LIMIT=SECS] [SKIP_MEMORY=1] [PARALLEL=1] bench/disk-set/run.sh [CMC] [RM] [MAX_MEMORY] [LABEL]
# Writes bench/disk-set/out/LABEL-*.txt: each run's summary and its progress
# lines (one every 10 s: the rate curve), and prints one row per run. With
# LIMIT, a run still going after LIMIT seconds is stopped with SIGINT (cmc
# then reports how far it got, and exits 3). With PARALLEL=1 the two runs
# go at once, under the same load (compare their progress lines at equal
# times when neither finishes within LIMIT).
set -euo pipefail
cmc=${1:-target/release/cmc}
rm_count=${2:-10}
budget=${3:-256M}
label=${4:-current}
limit=${LIMIT:-0}
out=bench/disk-set/out
mkdir -p "$out"
run() {
    local name=$1
    shift
    local log="$out/$label-$name-RM$rm_count-$budget.txt"
    /usr/bin/time -f 'peak RSS %M KB' timeout --signal=INT "$limit" \
        "$cmc" check two-phase "RM=$rm_count" --workers 2 --progress plain "$@" >"$log" 2>&1 || true
    local wall rss
    wall=$(grep -o 'Finished in [0-9.]* s' "$log" | grep -o '[0-9.]*' || echo "stopped at ${limit}")
    rss=$(grep -o 'peak RSS [0-9]* KB' "$log" | grep -o '[0-9]*' || echo '?')
    echo "$label $name RM=$rm_count: wall ${wall} s, peak RSS ${rss} KB ($log)"
}
if [ "${PARALLEL:-0}" = 1 ]; then
    [ "${SKIP_MEMORY:-0}" = 1 ] || run memory &
    run disk --disk-fingerprints --max-memory "$budget" &
    wait
else
    [ "${SKIP_MEMORY:-0}" = 1 ] || run memory
    run disk --disk-fingerprints --max-memory "$budget"
fi
