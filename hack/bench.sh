#!/usr/bin/env bash
# In-process benchmarks of issue #7 (make bench): the computation engine and
# the live layer at the large topology of package test/scale (20,000
# HTTPRoutes, 5,000 policies), without a kube-apiserver. Writes
# docs/benchmarks/inprocess.{md,json} and CPU profile summaries
# docs/benchmarks/profile-{full,incremental}.txt.
#
# Sized for a shared 2-core machine: every benchmark runs once (-benchtime
# 1x) except the incremental ones (INCR_BENCHTIME, default 10x), about 5–10
# minutes in all. Environment: SCALE (default 1), LIVE_SCALE (default 0.1),
# SEED (default 1), OUT (default docs/benchmarks).
#
# Then the growth of the start-up computation with the topology's size,
# hack/bench-growth.sh (docs/benchmarks/growth.{md,json}), and the
# end-to-end half, hack/bench-e2e.sh (through kube-apiserver on the
# local control plane; docs/benchmarks/e2e.{md,json}; BENCH_SCALE, ... are
# documented there), and the policy-machinery anchor, hack/bench-anchors.sh
# (docs/benchmarks/anchors.{md,json}; 20-40 minutes: policy-machinery is
# stopped after 10 minutes per size). BENCH_ONLY=inprocess, growth, e2e or
# anchors runs one part.
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
case "${BENCH_ONLY:-}" in
"" | inprocess) ;;
e2e) exec hack/bench-e2e.sh ;;
growth) exec hack/bench-growth.sh ;;
anchors) exec hack/bench-anchors.sh ;;
*) echo "bench: BENCH_ONLY must be inprocess, growth, e2e or anchors" >&2; exit 2 ;;
esac
GO=${GO:-go}
# shellcheck source=hack/lib/benchmachine.sh
source hack/lib/benchmachine.sh
SCALE=${SCALE:-1}
LIVE_SCALE=${LIVE_SCALE:-0.1}
SEED=${SEED:-1}
INCR_BENCHTIME=${INCR_BENCHTIME:-10x}
OUT_SET=${OUT:+1}
OUT=${OUT:-docs/benchmarks}
mkdir -p "${OUT}"
TMP=$(mktemp -d)
trap 'rm -rf "${TMP}"' EXIT

start=$(date -u +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench: building the test binary"
"${GO}" test -c -o "${TMP}/scale.test" ./test/scale
"${GO}" build -o "${TMP}/benchreport" ./test/scale/benchreport
args=(-scale="${SCALE}" -seed="${SEED}" -live-scale="${LIVE_SCALE}" -profile-dir="${TMP}")
run() { # run <out> <bench regexp> <benchtime>
  echo "bench: $2 (-benchtime $3)"
  "${TMP}/scale.test" -test.run='^$' -test.bench="$2" -test.benchmem -test.benchtime="$3" \
    -test.timeout=30m "${args[@]}" 2>&1 | tee "${TMP}/$1"
}
# Each group in its own process: the memory benchmark's peak RSS must not
# include the garbage of the others; the incremental ones share one engine.
run mem.txt '^BenchmarkMemoryPerTarget$' 1x
run full.txt '^Benchmark(FullComputation|ComputeAll)$' 1x
run incr.txt '^BenchmarkIncremental' "${INCR_BENCHTIME}"
run live.txt '^BenchmarkLiveStartUp$' 1x
run gzip.txt '^BenchmarkListGzip$' 3x

bench::machine_flags "${start}" "${load_before}"
"${TMP}/benchreport" -o "${OUT}/inprocess" \
  "${BENCH_MACHINE_FLAGS[@]}" \
  -machine "scale=${SCALE} (seed ${SEED}); live start-up at ${LIVE_SCALE}" \
  -machine "incremental benchtime=${INCR_BENCHTIME}" \
  "${TMP}/mem.txt" "${TMP}/full.txt" "${TMP}/incr.txt" "${TMP}/live.txt" "${TMP}/gzip.txt"

for p in full incremental; do
  "${GO}" tool pprof -top -nodecount=30 "${TMP}/scale.test" "${TMP}/${p}.prof" >"${OUT}/profile-${p}.txt" 2>/dev/null
done
echo "bench: wrote ${OUT}/inprocess.md, ${OUT}/inprocess.json, ${OUT}/profile-full.txt, ${OUT}/profile-incremental.txt"

if [[ -z "${BENCH_ONLY:-}" ]]; then
  echo "bench: growth with the topology's size (hack/bench-growth.sh)"
  if [[ -n "${OUT_SET}" ]]; then OUT="${OUT}/growth" hack/bench-growth.sh; else OUT='' hack/bench-growth.sh; fi
  echo "bench: the end-to-end half (hack/bench-e2e.sh)"
  # Its OUT is a path without extension; the in-process OUT is a directory.
  # Unset, bench-e2e.sh writes docs/benchmarks/e2e at scale 1 only.
  if [[ -n "${OUT_SET}" ]]; then OUT="${OUT}/e2e" hack/bench-e2e.sh; else OUT='' hack/bench-e2e.sh; fi
  echo "bench: the policy-machinery anchor (hack/bench-anchors.sh)"
  hack/bench-anchors.sh
fi
