#!/usr/bin/env bash
# The policy-machinery anchor of issue #20: every effective policy of a
# test/scale topology computed by this project's engine and by Kuadrant's
# policy-machinery (the way kuadrant-operator uses it), at 250, 500, 1,000
# and 2,000 HTTPRoutes, each side at each size in its own process; writes
# docs/benchmarks/anchors.md and anchors.json (time, memory, ratios, the
# verdict on the goal: policy-machinery ≥ 100× slower at 2,000 routes).
#
# First checks the two sides agree (test/anchors, TestSidesAgree, with a
# case at scale 0.015 where routes have two Gateways) and that the known
# differences still hold. policy-machinery's effective-policy computation
# grows with the square of the routes; each run is stopped after
# PM_TIMEOUT (default 10m) and then reported as a lower bound with the
# fraction done. Expect 20–40 minutes on a shared 2-core machine.
#
#   hack/bench-anchors.sh
#   ROUTES="250 500" hack/bench-anchors.sh   # quick (OUT defaults to a temp dir then)
#
# Environment: ROUTES, SEED (default 1), PM_TIMEOUT, OUT (path without
# extension), SKIP_CHECK=1 (skip the agreement tests).
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
GO=${GO:-go}
# shellcheck source=hack/lib/benchmachine.sh
source hack/lib/benchmachine.sh
SEED=${SEED:-1}
PM_TIMEOUT=${PM_TIMEOUT:-10m}
DEFAULT_ROUTES="250 500 1000 2000"
ROUTES=${ROUTES:-${DEFAULT_ROUTES}}
TMP=$(mktemp -d)
trap 'rm -rf "${TMP}"' EXIT
if [[ -z "${OUT:-}" ]]; then
  # Only the full set of sizes overwrites the committed report.
  if [[ "${ROUTES}" == "${DEFAULT_ROUTES}" && "${SEED}" == 1 ]]; then OUT=docs/benchmarks/anchors; else OUT="${TMP%/*}/anchors-$$"; fi
fi

start=$(date -u +%s)
echo "bench-anchors: building (module test/anchors)"
(cd test/anchors && "${GO}" build -o "${TMP}/anchorbench" ./cmd/anchorbench && "${GO}" build -o "${TMP}/anchorreport" ./cmd/anchorreport)
if [[ -z "${SKIP_CHECK:-}" ]]; then
  echo "bench-anchors: checking that both sides agree"
  (cd test/anchors && "${GO}" test -count=1 -timeout 20m . -args -agree-scale=0.015)
fi

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
results=()
for routes in ${ROUTES}; do
  scale=$(awk -v r="${routes}" 'BEGIN { print r / 20000 }')
  for side in ours policy-machinery; do
    echo "bench-anchors: ${routes} routes (scale ${scale}), ${side}"
    out="${TMP}/${side}-${routes}.json"
    "${TMP}/anchorbench" -side "${side}" -scale "${scale}" -seed "${SEED}" -timeout "${PM_TIMEOUT}" >"${out}"
    grep -E '^  "(wallSeconds|cpuSeconds|peakHeapMiB|finished|done)"' "${out}" | tr -d '\n' | tr -s ' '
    echo
    results+=("${out}")
  done
done

bench::machine_flags "${start}" "${load_before}"
mkdir -p "$(dirname "${OUT}")"
"${TMP}/anchorreport" -o "${OUT}" \
  "${BENCH_MACHINE_FLAGS[@]}" \
  -machine "policy-machinery=$(cd test/anchors && "${GO}" list -m -f '{{.Version}}' github.com/kuadrant/policy-machinery), gateway-api $(cd test/anchors && "${GO}" list -m -f '{{.Version}}' sigs.k8s.io/gateway-api)" \
  -machine "seed=${SEED}" \
  -machine "policy-machinery time limit per run=${PM_TIMEOUT}" \
  "${results[@]}"
echo "bench-anchors: wrote ${OUT}.md and ${OUT}.json"
