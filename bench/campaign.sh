#!/usr/bin/env bash
# A swarm simulation campaign on the reference Paxos core (the gate's
# configuration: 3 servers, 2 clients, one crash and one restart of a server),
# then one swarm campaign per planted-bug variant of the Rust reference cores
# (stopping at the first failing walk). Figures: bench/README.md, "Simulation
# campaigns". Usage: bench/campaign.sh [WALKS] (default 1000000).
set -euo pipefail
cd "$(dirname "$0")/.."
walks=${1:-1000000}
cargo build --release -p cmc-cli
cmc=target/release/cmc
common=(--no-deadlock --simulate --swarm --walk-length 40 --seed 1 --workers 2 --progress off)
paxos=(--nodes 5 crash_nodes=0,1,2 crashes=1 restarts=1)
out=$(mktemp -d)
/usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KB max RSS" \
  $cmc check --core rust:paxos "${paxos[@]}" "${common[@]}" --walks "$walks"
variant() {
  local name=$1
  shift
  local status=0
  $cmc check "$@" "${common[@]}" --walks 200000 --replay-out "$out/$name.cmc-trace" \
    | grep -E '^(Error|No violation|Walks|The failing walk)' || status=$?
  echo "  ^ $name"
}
for bug in 1 2 3 4; do variant "paxos-bug$bug" --core "rust:paxos-bug$bug" "${paxos[@]}"; done
for bug in 1 2 3 4; do
  variant "primary_backup-bug$bug" --core "rust:primary_backup-bug$bug" --nodes 3 requests=1 crashes=1 restarts=1
done
for bug in 2 3 5; do
  variant "abd-bug$bug" --core "rust:abd-bug$bug" --nodes 5 clients=3,4 requests=2 crash_nodes=0,1,2 crashes=1 restarts=1
done
for bug in 1 4; do variant "abd-4req-bug$bug" --core "rust:abd-bug$bug" --nodes 5 clients=3,4 requests=4; done
