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
source "${ROOT}/hack/lib/fuzzoutcome.sh"
LOGDIR=$(mktemp -d)
trap 'rm -rf "${LOGDIR}"' EXIT
found=0
summary=()
# One go list for all packages (one per package cost ~1 s each).
while read -r pkg dir; do
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "${dir}"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    found=1
    echo "fuzz: ${pkg} ${f} for ${FUZZTIME}"
    t0=${SECONDS}
    log="${LOGDIR}/${f}.log"
    if go test -run='^$' -fuzz="^${f}\$" -fuzztime="${FUZZTIME}" -fuzzminimizetime="${FUZZMINIMIZETIME}" "${pkg}" 2>&1 | tee "${log}"; then
      summary+=("${pkg} ${f}: $((SECONDS - t0))s wall, no finding")
      continue
    fi
    # A failure is a finding unless it is only Go 1.26's shutdown race at the deadline
    # (hack/lib/fuzzoutcome.sh); even then nothing may have been written, and the corpus replayed
    # without fuzzing (deterministic) must pass.
    new_inputs=$(git status --porcelain --untracked-files=all -- "${dir}/testdata/fuzz/${f}" 2>/dev/null || true)
    if [[ $(fuzzoutcome::classify "${log}") != deadline-race || -n "${new_inputs}" ]]; then
      echo "fuzz: ${pkg} ${f}: finding (see above)"; exit 1
    fi
    echo "fuzz: ${f} stopped by Go 1.26's fuzz deadline race (golang/go#75804), not an input; replaying its corpus"
    go test -count=1 -run="^${f}\$" "${pkg}"
    summary+=("${pkg} ${f}: $((SECONDS - t0))s wall, no finding (deadline race at the end; corpus replayed)")
  done
done < <(go list -f '{{.ImportPath}} {{.Dir}}' ./...)
if [[ ${found} -eq 0 ]]; then echo "fuzz: no Fuzz targets found"; exit 1; fi
printf 'fuzz: %s\n' "${summary[@]}"
