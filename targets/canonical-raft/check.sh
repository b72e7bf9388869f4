#!/usr/bin/env bash
# Everything CI checks of canonical/raft 0.15.0 (Debian's libraft.so.2,
# unchanged), in about half a minute:
#  1. the adapter and the fixture tests build against libraft-dev;
#  2. the gate (gate.toml): configurations without the bugs' preconditions
#     (with and without a crash) pass every property exhaustively; Figure 8
#     (LeaderCommitsOwnTerm) and the heartbeat bug (CommittedEntriesSurvive)
#     are caught by walks with a pinned seed from prefix traces, and the
#     traces the gate writes for them replay to the same violations;
#  3. the pinned counterexamples (Figure 8; the heartbeat answered with the
#     follower's last index) replay to their violations with the adapter
#     built here (the same bytes as the gate's, at another path);
#  4. the library's own fixture, without cmc, fails both scenarios.
# Usage: targets/canonical-raft/check.sh [CMC] (default: target/release/cmc)
# The gate's evidence goes to $CMC_EVIDENCE (default: a temporary folder).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cmc="$(realpath "${1:-target/release/cmc}")"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
bash "$here/build.sh" "$out"
evidence="${CMC_EVIDENCE:-$out/evidence}"
"$cmc" gate "$here/gate.toml" --evidence "$evidence"

expect_violation() { # PROPERTY STATUS OUTPUT-FILE WHAT
  if [ "$2" -ne 1 ] || ! grep -q "$1 is violated" "$3"; then
    echo "canonical-raft: expected $4 to violate $1 (exit 1), got exit $2:" >&2
    tail -5 "$3" >&2
    exit 1
  fi
}

for pinned in figure8:LeaderCommitsOwnTerm heartbeat:LeaderCompleteness; do
  name=${pinned%%:*}
  status=0
  "$cmc" replay "$here/$name.cmc-trace" --core "$out/libcanonical_raft.so" > "$out/$name.txt" 2>&1 || status=$?
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
