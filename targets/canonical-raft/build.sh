#!/usr/bin/env bash
# Builds the canonical/raft adapter and the fixture replay against the
# system's libraft.so.2 (Debian's libraft-dev, installed by scripts/setup.sh):
#   OUT/libcanonical_raft.so   the adapter and its properties (cmc check --core)
#   OUT/figure8, OUT/heartbeat the two scenarios through the library's own fixture
# Usage: targets/canonical-raft/build.sh OUT
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: build.sh OUT}"
out="$(mkdir -p "$out" && cd "$out" && pwd)"
flags=(-std=c11 -Wall -Wextra -Werror -O2)
# The adapter exactly as gate.toml builds it (in this folder, with relative
# paths): the same bytes, so the digest the replay files record.
(cd "$here" && cc "${flags[@]}" -fPIC -shared -I../../include raft_core.c raft_props.c -lraft \
  -o "$out/libcanonical_raft.so")
for scenario in figure8 heartbeat; do
  cc "${flags[@]}" "$here/fixture/$scenario.c" -lraft -o "$out/$scenario"
done
