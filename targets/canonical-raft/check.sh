#!/usr/bin/env bash
# Everything CI checks of canonical/raft 0.15.0 (Debian's libraft.so.2,
# unchanged), in about half a minute:
#  1. the adapter and the fixture tests build against libraft-dev;
#  2. the gate (gate.toml): configurations without the bugs' preconditions
#     (with and without a crash) pass every property exhaustively;
#  3. Figure 8: random walks with a pinned seed from the scenario's first 23
#     steps find a leader committing an entry of an earlier term
#     (LeaderCommitsOwnTerm), and the trace they write replays to it;
#  4. the pinned counterexamples (Figure 8; the heartbeat answered with the
#     follower's last index) replay to their violations;
#  5. the library's own fixture, without cmc, fails both scenarios.
# Usage: targets/canonical-raft/check.sh [CMC] (default: target/release/cmc)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cmc="$(realpath "${1:-target/release/cmc}")"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
bash "$here/build.sh" "$out"
library="$out/libcanonical_raft.so"
"$cmc" gate "$here/gate.toml" --evidence "${CMC_EVIDENCE:-$out/evidence}"

# A replay file recorded against another build of the adapter, made to name
# this build (its path and digest, as cmc records them).
world=(--core "$library" --nodes 3 ticks=8 requests=2 clients=0,1 spread=1 --no-deadlock)
# (A one-state search: its verdict, vacuous, does not matter; its header does.)
digest=$({ "$cmc" check "${world[@]}" --max-depth 1 2>&1 || true; } | sed -n 's/.* core_digest=\([^ ]*\) .*/\1/p' | head -1)
retarget() {
  sed -e "s|^param core=.*|param core=$library\nparam core_digest=$digest|" -e '/^param core_digest=/d' "$1" > "$2"
}
expect_violation() { # PROPERTY STATUS OUTPUT-FILE WHAT
  if [ "$2" -ne 1 ] || ! grep -q "$1 is violated" "$3"; then
    echo "canonical-raft: expected $4 to violate $1 (exit 1), got exit $2:" >&2
    tail -5 "$3" >&2
    exit 1
  fi
}

retarget "$here/figure8-prefix.cmc-trace" "$out/prefix.cmc-trace"
status=0
"$cmc" check "${world[@]}" --simulate --swarm --walks 2000 --walk-length 20 --seed 1 --workers 1 \
  --walks-from "$out/prefix.cmc-trace" --replay-out "$out/found.cmc-trace" > "$out/walks.txt" 2>&1 || status=$?
grep -v '^ ' "$out/walks.txt" | tail -6
expect_violation "LeaderCommitsOwnTerm" "$status" "$out/walks.txt" "the walks from Figure 8's prefix"
status=0
"$cmc" replay "$out/found.cmc-trace" > "$out/replay.txt" 2>&1 || status=$?
expect_violation "LeaderCommitsOwnTerm" "$status" "$out/replay.txt" "the replay of the walk that found Figure 8"

# The pinned counterexamples replay to their violations.
for pinned in figure8:LeaderCommitsOwnTerm heartbeat:LeaderCompleteness; do
  name=${pinned%%:*}
  retarget "$here/$name.cmc-trace" "$out/$name.cmc-trace"
  status=0
  "$cmc" replay "$out/$name.cmc-trace" > "$out/$name.txt" 2>&1 || status=$?
  tail -2 "$out/$name.txt"
  expect_violation "${pinned#*:}" "$status" "$out/$name.txt" "the pinned counterexample $name.cmc-trace"
done

for scenario in figure8 heartbeat; do
  status=0
  "$out/$scenario" || status=$?
  if [ "$status" -ne 1 ]; then
    echo "canonical-raft: expected the fixture replay of $scenario to fail on libraft 0.15.0 (exit 1), got $status" >&2
    exit 1
  fi
done
echo "canonical-raft: done (the violations above are expected: bugs of libraft 0.15.0)"
