#!/usr/bin/env bash
# Runs every Fuzz target of the product module for a bounded time each (FUZZTIME, a go test
# -fuzztime value; default 30s for `make test`, `make test-long` passes 60s). A finding fails the
# run; go test writes the failing input under the package's testdata/fuzz/<target>/.
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
FUZZTIME=${FUZZTIME:-30s}
# go test minimizes every input that finds new coverage, for up to 60 s each by default, and counts
# none of it as fuzzing. FuzzCompute finds new coverage with nearly every input, so with the
# default it spent its whole budget minimizing: 13 inputs executed in 60 s. 0 turns minimization
# off (about 10,000 inputs in 20 s); a finding is saved unminimized (re-run it with
# FUZZMINIMIZETIME=60s to shrink it).
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-0}
found=0
summary=()
# One go list for all packages (one per package cost ~1 s each).
while read -r pkg dir; do
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "${dir}"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    found=1
    echo "fuzz: ${pkg} ${f} for ${FUZZTIME}"
    t0=${SECONDS}
    go test -run='^$' -fuzz="^${f}\$" -fuzztime="${FUZZTIME}" -fuzzminimizetime="${FUZZMINIMIZETIME}" "${pkg}"
    summary+=("${pkg} ${f}: $((SECONDS - t0))s wall, no finding")
  done
done < <(go list -f '{{.ImportPath}} {{.Dir}}' ./...)
if [[ ${found} -eq 0 ]]; then echo "fuzz: no Fuzz targets found"; exit 1; fi
printf 'fuzz: %s\n' "${summary[@]}"
