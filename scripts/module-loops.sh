#!/usr/bin/env bash
# Import loops between the modules of a crate whose modules are the files of
# one folder (e.g. `scripts/module-loops.sh crates/cli/src`): an edge A B for
# each module A that names `crate::B` outside comments and tests (the crate
# root, lib.rs, counts as `lib`: its own items and the modules it names).
# Prints the edges with -v; reports each loop `tsort` finds and exits 1 if
# there is one.
set -euo pipefail
verbose=0
if [ "${1:-}" = -v ]; then verbose=1; shift; fi
dir=${1:?usage: scripts/module-loops.sh [-v] SRC_DIR}
mods=$(cd "$dir" && ls -- *.rs | sed 's/\.rs$//')
is_mod() { grep -qx -- "$1" <<<"$mods"; }
edges=$(
  for file in "$dir"/*.rs; do
    m=$(basename "$file" .rs)
    [ "$m" = main ] && continue
    body=$(awk '/^#\[cfg\(test\)\]/{exit} {print}' "$file" | grep -v '^\s*//' || true)
    if [ "$m" = lib ]; then
      refs=$(grep -oE '\b[a-z_]+::' <<<"$body" | sed 's/:://' | sort -u || true)
    else
      refs=$(grep -oE 'crate::[a-zA-Z_]+' <<<"$body" | sed 's/crate:://' | sort -u || true)
    fi
    for r in $refs; do
      if is_mod "$r"; then
        if [ "$r" != "$m" ]; then echo "$m $r"; fi
      elif [ "$m" != lib ]; then
        echo "$m lib"
      fi
    done
  done | sort -u
)
[ "$verbose" = 1 ] && printf '%s\n' "$edges"
loops=$(tsort <<<"$edges" 2>&1 >/dev/null | grep -c 'input contains a loop' || true)
modules=$(wc -l <<<"$mods")
echo "$dir: $modules modules, $(wc -l <<<"$edges") import edges, $loops loop(s) found by tsort"
if [ "$loops" != 0 ]; then
  tsort <<<"$edges" 2>&1 >/dev/null | sed 's/^tsort: -: input contains a loop:/loop:/' >&2
  exit 1
fi
