#!/usr/bin/env bash
# Prints the -ldflags that stamp a binary with this checkout's version (git describe), commit and
# commit date (reproducible: the same commit gives the same binary), for `make build` and
# `make release`. Outside a git checkout it prints the flags without them (the binary then says
# what the Go toolchain recorded, or "unknown").
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
pkg=github.com/effectivepolicy-dev/effectivepolicy/internal/version
flags="-s -w"
if git rev-parse --git-dir >/dev/null 2>&1; then
  v=$(git describe --tags --always --dirty 2>/dev/null || true)
  c=$(git rev-parse HEAD)
  [[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]] && c="$c-dirty"
  d=$(TZ=UTC git show -s --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD)
  # git describe without tags gives a bare abbreviated hash: make it a version.
  [[ "$v" =~ ^v[0-9] ]] || v="v0.0.0-${v}"
  flags="$flags -X $pkg.version=$v -X $pkg.commit=$c -X $pkg.buildDate=$d"
fi
echo "$flags"
