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
# A backquoted relative path with a folder in it (system/state/budget.rs,
# src/specialised.rs) names a file below the citing file's folder, its crate
# or target, or any crate's src/. A file of another project (an upstream
# crate's test, a file the tutorial has the user create) is listed, with the
# document citing it, in scripts/citations-outside.txt.
outside=scripts/citations-outside.txt
while IFS=: read -r file line cited; do
  path=${cited%%:*}
  path=${path%/}
  grep -qxF "$file $path" "$outside" && continue
  folder=$(dirname "$file")
  home=$(echo "$file" | grep -oE '^(crates|targets|examples)/[^/]+' || echo .)
  found=
  for base in "$folder" "$folder/src" "$home" "$home/src" crates/*/src crates/* targets/* examples/* bench; do
    if [ -e "$base/$path" ]; then found=1; break; fi
  done
  if [ -z "$found" ]; then
    echo "$file:$line: cites \`$cited\`, which is in no folder it could be relative to (a file of another project goes in $outside)" >&2
    status=1
  fi
done < <(grep -noE "\`[a-z_0-9]+(/[A-Za-z_0-9_-]+)*/[A-Za-z_0-9_-]+(\.(rs|c|h|md|sh|py|toml)|/)(:[^\` ]*)?\`" $files \
           | grep -vE ":\`($prefixes)/" | tr -d '`' | sort -u)
if grep -nE '\b[Ii]ssue [0-9]+|\(issue [0-9]+' $files | grep -v '^scripts/check-citations.sh:'; then
  echo "the lines above cite a tracker's issue numbers: say what the product does instead" >&2
  status=1
fi
exit $status
