#!/usr/bin/env bash
# The 10^9-state run: two-phase RM=12 (about 2.2·10^9 states) with the
# visited set on disk, no parent links (--no-trace, see README.md), cut
# short at 10^9 distinct states (reported as such). Progress lines every
# 10 s carry the average and the last-10-s distinct rate; /usr/bin/time -v
# gives the peak RSS. Run it on a quiet machine with ~30 GB free under DIR.
# Usage: bench/disk-set/billion.sh [CMC] [DIR] [MAX_STATES] [MAX_MEMORY]
set -euo pipefail
cmc=${1:-target/release/cmc}
dir=${2:-/tmp/cmc-billion}
max_states=${3:-1000000000}
budget=${4:-10G}
out=bench/disk-set/out
mkdir -p "$out" "$dir"
log="$out/billion-RM12-$max_states-$budget.txt"
df -h "$dir" >"$log"
/usr/bin/time -v "$cmc" check two-phase RM=12 --workers 2 \
    --disk-fingerprints --max-memory "$budget" --no-trace \
    --max-states "$max_states" --trace-dir "$dir" --progress plain >>"$log" 2>&1 || true
grep -E '^(No violation|Model checking|Error|[0-9]+ states generated|Finished)|Maximum resident' "$log"
echo "rate at 10^8 and 10^9: the progress lines of $log around those distinct counts"
