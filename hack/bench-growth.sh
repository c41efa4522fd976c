#!/usr/bin/env bash
# Growth of the start-up computation (issue #20, "Growth"): BenchmarkGrowth
# of test/scale at several multiples of the scale-1 topology, each in its own
# process (a process's peak RSS is its own), then test/scale/growthreport
# fits time and memory against the scale. Writes docs/benchmarks/growth.md
# and growth.json.
#
#   hack/bench-growth.sh                   # scales 0.25 0.5 1 2 5: ~6 min, ~8 GiB at 5
#   SCALES="0.05 0.1" hack/bench-growth.sh # quick (OUT defaults to a temp dir then)
#
# Environment: SCALES, SEED (default 1), OUT (path without extension).
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
GO=${GO:-go}
# shellcheck source=hack/lib/benchmachine.sh
source hack/lib/benchmachine.sh
SEED=${SEED:-1}
DEFAULT_SCALES="0.25 0.5 1 2 5"
SCALES=${SCALES:-${DEFAULT_SCALES}}
TMP=$(mktemp -d)
trap 'rm -rf "${TMP}"' EXIT
if [[ -z "${OUT:-}" ]]; then
  # Only the full set of scales overwrites the committed report.
  if [[ "${SCALES}" == "${DEFAULT_SCALES}" ]]; then OUT=docs/benchmarks/growth; else OUT="${TMP%/*}/growth-$$"; fi
fi

start=$(date -u +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench-growth: building the test binary"
"${GO}" test -c -o "${TMP}/scale.test" ./test/scale
"${GO}" build -o "${TMP}/growthreport" ./test/scale/growthreport
runs=()
for s in ${SCALES}; do
  echo "bench-growth: scale ${s}"
  "${TMP}/scale.test" -test.run='^$' -test.bench='^BenchmarkGrowth$' -test.benchtime=1x -test.timeout=60m \
    -scale="${s}" -seed="${SEED}" 2>&1 | tee "${TMP}/growth-${s}.txt"
  runs+=("${s}=${TMP}/growth-${s}.txt")
done
bench::machine_flags "${start}" "${load_before}"
mkdir -p "$(dirname "${OUT}")"
"${TMP}/growthreport" -o "${OUT}" \
  "${BENCH_MACHINE_FLAGS[@]}" \
  -machine "seed=${SEED}" \
  "${runs[@]}"
echo "bench-growth: wrote ${OUT}.md and ${OUT}.json"
