#!/usr/bin/env bash
# Runs every Fuzz target of the product module for a bounded time each (FUZZTIME, a go test
# -fuzztime value; default 30s for `make test`, `make test-long` passes 60s). A finding fails the
# run; go test writes the failing input under the package's testdata/fuzz/<target>/.
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
FUZZTIME=${FUZZTIME:-30s}
found=0
summary=()
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "${pkg}")
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "${dir}"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    found=1
    echo "fuzz: ${pkg} ${f} for ${FUZZTIME}"
    t0=${SECONDS}
    go test -run='^$' -fuzz="^${f}\$" -fuzztime="${FUZZTIME}" "${pkg}"
    summary+=("${pkg} ${f}: $((SECONDS - t0))s wall, no finding")
  done
done
if [[ ${found} -eq 0 ]]; then echo "fuzz: no Fuzz targets found"; exit 1; fi
printf 'fuzz: %s\n' "${summary[@]}"
