#!/usr/bin/env bash
# The main job: builds cmc and checks bundled models end to end.
#  1. TwoPhase with 7 resource managers: passes (296,448 distinct states, depth 23, as TLC).
#  2. PaxosCommit: passes (1,321,761 distinct states, depth 28, as TLC).
#  3. A World of two request/ack cores (the Rust core) under drops and a crash:
#     passes; the same protocol as the C core gives the same counts.
#  4. TwoPhase with the NoRMCommitted invariant: fails with a 9-state
#     counterexample, written as a replay file and replayed.
#     HTML reports of a violation are kept in target/reports (a CI artifact):
#     DieHard's NotSolved counterexample, and a World's planted bug with its
#     message sequence chart; plus DieHard's state graph in DOT.
#  5. The seed corpus of the reference cores' planted bugs
#     (crates/protocols/corpus): every pinned trace still fails on its
#     planted-bug build and not on the fixed one; a short swarm campaign.
#  6. The reference cores' gate file (crates/protocols/gate.toml): every
#     control passes and every planted bug is caught, evidence kept.
#  6. A C team's own core through cmc only (examples/c-lease, no Rust code
#     of theirs): the lease library built with cc, its control checked, and
#     its gate file (every planted bug caught), evidence kept.
#  7. A real C library checked unchanged (targets/canonical-raft: Debian's
#     libraft.so.2 0.15.0 through its heap-state adapter): its gate file
#     passes configurations without the bugs' preconditions and catches
#     Figure 8 (walks with a pinned seed from a prefix trace), whose trace
#     replays; the library's own fixture fails the same scenarios without cmc.
#  8. A user's own front end (examples/rust-user, `mycheck`): its Rust model
#     passes, its planted bug is found, written as a replay file and replayed
#     by mycheck; its Rust core passes in process and exported as a shared
#     library loaded by cmc; its gate file has no holes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release -p cmc-cli
cmc=target/release/cmc
out=$(mktemp -d)
$cmc list
$cmc check two-phase RM=7
$cmc check paxos-commit
$cmc check --core rust:reqack --nodes 2 requests=2 drops=1 crashes=1 restarts=1 crash_nodes=1
status=0
$cmc check two-phase RM=3 INVARIANTS=NoRMCommitted --replay-out "$out/two-phase.cmc-trace" || status=$?
if [ "$status" -ne 1 ]; then
  echo "main job: expected the NoRMCommitted check to fail with exit code 1, got $status" >&2
  exit 1
fi
status=0
$cmc replay "$out/two-phase.cmc-trace" | head -3 || status=$?
mkdir -p target/reports
status=0
$cmc check die-hard INVARIANTS=NotSolved --replay-out "$out/die-hard.cmc-trace" \
  --report target/reports/die-hard.html --dump-dot target/reports/die-hard.dot || status=$?
if [ "$status" -ne 1 ]; then
  echo "main job: expected DieHard's NotSolved to fail with exit code 1, got $status" >&2
  exit 1
fi
status=0
$cmc check --core rust:reqack-bug2 --nodes 2 requests=2 --replay-out "$out/world.cmc-trace" \
  --report target/reports/world-reqack-bug2.html || status=$?
if [ "$status" -ne 1 ]; then
  echo "main job: expected the planted reqack bug to be caught (exit code 1), got $status" >&2
  exit 1
fi
grep -q '<svg' target/reports/world-reqack-bug2.html
if command -v dot >/dev/null; then
  dot -Tsvg target/reports/die-hard.dot -o target/reports/die-hard.svg
else
  echo "main job: note: Graphviz is not installed, die-hard.dot is not rendered"
fi
$cmc corpus crates/protocols/corpus
$cmc check --core rust:paxos --nodes 5 crash_nodes=0,1,2 crashes=1 restarts=1 --no-deadlock \
  --simulate --swarm --walks 20000 --walk-length 40 --seed 1
rm -rf target/gate-evidence
$cmc gate crates/protocols/gate.toml --evidence target/gate-evidence
lease=examples/c-lease
cc -std=c11 -Wall -Wextra -Werror -O2 -fPIC -shared -Iinclude "$lease/lease.c" "$lease/lease_props.c" \
  -o "$out/liblease.so"
$cmc check --core "$out/liblease.so" --nodes 3 requests=2 clients=1,2 ticks=13 skew=1 cfg1=1 --no-deadlock
rm -rf target/gate-evidence-c-lease
$cmc gate "$lease/gate.toml" --evidence target/gate-evidence-c-lease
rm -rf target/gate-evidence-canonical-raft
CMC_EVIDENCE=target/gate-evidence-canonical-raft bash targets/canonical-raft/check.sh "$cmc"
cargo build --release -p cmc-example-rust-user
mycheck=target/release/mycheck
$mycheck list
$mycheck check token-ring N=6
status=0
$mycheck check token-ring BUG=1 --replay-out "$out/token-ring.cmc-trace" || status=$?
if [ "$status" -ne 1 ]; then
  echo "main job: expected mycheck to find the token ring's planted bug (exit code 1), got $status" >&2
  exit 1
fi
status=0
$mycheck replay "$out/token-ring.cmc-trace" | tail -2 || status=$?
if [ "$status" -ne 1 ]; then
  echo "main job: expected mycheck's replay to show the violation again (exit code 1), got $status" >&2
  exit 1
fi
$mycheck check --core rust:wal --nodes 1 requests=3 crashes=1 restarts=1
$cmc check --core target/release/librust_user.so --nodes 1 requests=3 crashes=1 restarts=1
rm -rf target/gate-evidence-rust-user
$mycheck gate examples/rust-user/gate.toml --evidence target/gate-evidence-rust-user
echo "main job: done (the violations above are expected: they show counterexamples and their replays)"
