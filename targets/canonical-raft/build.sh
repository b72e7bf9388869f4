#!/usr/bin/env bash
# Builds the canonical/raft adapter and the fixture replay against the
# system's libraft.so.2 (Debian's libraft-dev, installed by scripts/setup.sh):
#   OUT/libcanonical_raft.so   the adapter and its properties (cmc check --core)
#   OUT/figure8                Figure 8 through the library's own fixture
# Usage: targets/canonical-raft/build.sh OUT
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: build.sh OUT}"
mkdir -p "$out"
flags=(-std=c11 -Wall -Wextra -Werror -O2)
cc "${flags[@]}" -fPIC -shared -I"$here/../../include" "$here/raft_core.c" "$here/raft_props.c" -lraft \
  -o "$out/libcanonical_raft.so"
for scenario in figure8 heartbeat; do
  cc "${flags[@]}" "$here/fixture/$scenario.c" -lraft -o "$out/$scenario"
done
