#!/usr/bin/env bash
# The timely engine on loopback against the native engine, on one machine:
# two-phase RM=N (default 8), native with 2 workers, then timely with
# 1 process of 2 workers and 1, 2 and 4 processes of 1 worker each.
# Usage: bench/timely/run.sh [CMC] [RM]
# Prints one row per run: wall seconds (the slowest process), ratio to
# native, distinct states, the exchange line of process 0, and the bytes
# sent between processes per distinct and per generated state.
set -euo pipefail
cmc=$(realpath "${1:-target/release/cmc}")
rm_count=${2:-8}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
free_ports() {
    python3 - "$1" <<'PY'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print("\n".join(f"127.0.0.1:{s.getsockname()[1]}" for s in socks))
PY
}
model=(two-phase "RM=$rm_count")
(cd "$work" && "$cmc" check "${model[@]}" --workers 2 --json --progress off >native.json)
native=$(field "$work/native.json" wall_seconds)
echo "native, 2 workers: ${native} s, $(field "$work/native.json" distinct_states) distinct"
row() {
    local processes=$1 workers=$2
    free_ports "$processes" >"$work/hosts"
    local started=$SECONDS pids=()
    for ((i = 0; i < processes; i++)); do
        (cd "$work" && "$cmc" check "${model[@]}" --engine timely --workers "$workers" \
            --processes "$processes" --process "$i" --hostfile hosts --json --progress off \
            >"p$i.json" 2>"p$i.err") &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
    local slowest
    slowest=$(for ((i = 0; i < processes; i++)); do field "$work/p$i.json" wall_seconds; done | sort -g | tail -1)
    local ratio
    ratio=$(python3 -c "print(f'{$slowest / $native:.2f}')")
    local distinct generated remote
    distinct=$(field "$work/p0.json" distinct_states)
    generated=$(field "$work/p0.json" states_generated)
    remote=$(grep -o '[0-9]* between processes' "$work/p0.err" | grep -o '^[0-9]*')
    echo "timely, $processes process(es) x $workers worker(s): ${slowest} s (${ratio}x native), $distinct distinct; $(grep -o '[0-9]* bytes of states sent.*' "$work/p0.err"); between processes: $(python3 -c "print(f'{$remote / $distinct:.1f} bytes per distinct state, {$remote / $generated:.1f} per generated state')")"
}
row 1 2
row 2 1
row 4 1
