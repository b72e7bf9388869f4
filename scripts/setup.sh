#!/usr/bin/env bash
# Installs what cmc's build and tests need on a fresh Debian machine:
# a C compiler and binutils (`nm`) for C cores, and headless Chromium (with
# a font) for the browser tests of `cmc explore` and the HTML reports, and
# canonical/raft (libraft-dev) for targets/canonical-raft.
# Idempotent; needs root (or sudo) only when something is missing.
set -euo pipefail

missing=()
command -v cc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
command -v nm >/dev/null 2>&1 || missing+=(binutils)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v chromium >/dev/null 2>&1 || missing+=(chromium fonts-liberation)
# canonical/raft 0.15.0, checked unchanged by targets/canonical-raft.
[ -e /usr/include/raft/fixture.h ] || missing+=(libraft-dev)

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi
command -v cargo >/dev/null 2>&1 || {
  echo "setup: cargo is not on PATH; install Rust (rustup) first" >&2
  exit 2
}
