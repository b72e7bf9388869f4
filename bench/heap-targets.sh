#!/usr/bin/env bash
# The libraries checked unchanged as heap-state cores (targets/), against the
# reference Paxos core (fixed-size state) in the same run: a breadth-first
# search cut at a depth that keeps each run short, with 1 and 2 workers;
# distinct states, states/s, peak RSS and visited-table bytes per distinct
# state. Figures: bench/README.md, "Libraries as heap-state cores".
# Usage: bench/heap-targets.sh (builds what it runs; prints a Markdown table).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release
# Both omnipaxos packages build a binary `omnipaxos-check` into one target
# directory: the 0.2.0 one is copied aside before the 0.2.1 one replaces it.
cargo build --release --manifest-path targets/omnipaxos/v0_2_0/Cargo.toml --target-dir target >&2
cp "$bin/omnipaxos-check" "$bin/omnipaxos-0.2.0-check"
cargo build --release -p cmc-cli --bin cmc >&2
cargo build --release -p cmc-target-omnipaxos -p cmc-target-raft-rs >&2
omnipaxos=(requests=2 ticks=3 crashes=1 restarts=1 clients=0,1,2)
rows=(
  "Paxos reference core|$bin/cmc|rust:paxos|5|16|crash_nodes=0,1,2 crashes=1 restarts=1"
  "omnipaxos 0.2.1|$bin/omnipaxos-check|rust:omnipaxos-0.2.1|3|7|${omnipaxos[*]}"
  "omnipaxos 0.2.0|$bin/omnipaxos-0.2.0-check|rust:omnipaxos-0.2.0|3|7|${omnipaxos[*]}"
  "raft-rs 0.7.0|$bin/raft-rs-check|rust:raft-rs-0.7.0|3|13|requests=1 ticks=2 crashes=1 restarts=1 drops=1"
)
echo "| core | params | depth | workers | distinct | generated | wall s | distinct/s | vs Paxos | peak RSS MB | RSS B/state | table B/state |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
declare -A paxos_rate
for row in "${rows[@]}"; do
  IFS='|' read -r label binary core nodes depth params <<<"$row"
  for workers in 1 2; do
    json=$(mktemp)
    rss=$(mktemp)
    /usr/bin/time -o "$rss" -f "%M" "$binary" check --core "$core" --nodes "$nodes" \
      --max-depth "$depth" --workers "$workers" --no-deadlock --progress off --json \
      $params >"$json" 2>/dev/null || true
    line=$(python3 - "$json" "$rss" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
rss_kb = int(open(sys.argv[2]).read().split()[-1])
n = d["distinct_states"]
print(d["verdict"], n, d["states_generated"], d["depth"], d["wall_seconds"],
      d["distinct_states_per_second"], rss_kb * 1024 / n, d["table_bytes"] / n, rss_kb / 1024)
EOF
)
    rm -f "$json" "$rss"
    read -r verdict distinct generated reached wall rate rss_per table_per rss_mb <<<"$line"
    if [[ $label == Paxos* ]]; then paxos_rate[$workers]=$rate; fi
    ratio=$(python3 -c "print(f'{$rate / ${paxos_rate[$workers]}:.3f}')")
    printf '| %s | `%s` | %s | %s | %s | %s | %.2f | %.0f | %s | %.0f | %.0f | %.0f |\n' \
      "$label ($verdict)" "$params" "$reached" "$workers" "$distinct" "$generated" \
      "$wall" "$rate" "$ratio" "$rss_mb" "$rss_per" "$table_per"
  done
done
