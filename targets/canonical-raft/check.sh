#!/usr/bin/env bash
# Everything CI checks of canonical/raft 0.15.0 (Debian's libraft.so.2,
# unchanged), in about a minute:
#  1. the adapter and the fixture test build against libraft-dev;
#  2. the gate: a configuration without Figure 8's preconditions passes every
#     property exhaustively, and Figure 8 is caught by LeaderCompleteness;
#  3. the pinned counterexample replays to the same violation;
#  4. the library's own fixture, without cmc, fails the same scenario.
# Usage: targets/canonical-raft/check.sh [CMC] (default: target/release/cmc)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cmc="$(realpath "${1:-target/release/cmc}")"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
bash "$here/build.sh" "$out"
evidence="${CMC_EVIDENCE:-$out/evidence}"
rm -rf "$evidence"
"$cmc" gate "$here/gate.toml" --evidence "$evidence"
# The pinned counterexample, recorded against another build of the adapter:
# its actions replayed against this one.
sed -e "s|^param core=.*|param core=$out/libcanonical_raft.so|" -e '/^param core_digest=/d' \
  "$here/figure8.cmc-trace" > "$out/figure8.cmc-trace"
status=0
"$cmc" replay "$out/figure8.cmc-trace" > "$out/replay.txt" || status=$?
tail -3 "$out/replay.txt"
if [ "$status" -ne 1 ] || ! grep -q "Invariant LeaderCompleteness is violated" "$out/replay.txt"; then
  echo "canonical-raft: expected the Figure 8 trace to violate LeaderCompleteness (exit 1), got $status" >&2
  exit 1
fi
status=0
"$out/figure8" || status=$?
if [ "$status" -ne 1 ]; then
  echo "canonical-raft: expected the fixture replay of Figure 8 to fail on libraft 0.15.0 (exit 1), got $status" >&2
  exit 1
fi
echo "canonical-raft: done (the violations above are expected: Figure 8 in libraft 0.15.0)"
