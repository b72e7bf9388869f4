#!/usr/bin/env bash
# Documents and comments cite files that exist and no tracker: every
# backquoted repository path (`crates/...`, `docs/...`, `bench/...`,
# `scripts/...`, `include/...`, `examples/...`, `targets/...`, `cores/...`)
# in a tracked source or document names a file or folder of the tree, and
# no line cites an issue number (history lives in git, not in the product).
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
files=$(git ls-files '*.md' '*.rs' '*.sh' '*.toml' '*.c' '*.h' '*.py')
prefixes='crates|docs|bench|scripts|include|examples|targets|cores'
while IFS=: read -r file line cited; do
  path=${cited%%:*}          # `path:line` and `path::item` cite the path
  path=${path%%#*}
  path=${path%/}
  case "$path" in *'*'*|*'<'*|*'{'*|*'...'*|*'…'*|*NAME*|*'$'*|*/.venv) continue ;; esac
  if [ ! -e "$path" ]; then
    echo "$file:$line: cites \`$cited\`, which does not exist" >&2
    status=1
  fi
done < <(grep -noE "\`($prefixes)/[^\` ]+\`" $files | tr -d '`' | sort -u)
if grep -nE '\b[Ii]ssue [0-9]+|\(issue [0-9]+' $files | grep -v '^scripts/check-citations.sh:'; then
  echo "the lines above cite a tracker's issue numbers: say what the product does instead" >&2
  status=1
fi
exit $status
