#!/usr/bin/env bash
# The page of `kubectl effectivepolicy ui` at scale 1 in headless Chromium
# (test/uibench; docs/benchmarks/ui.md): navigation to interactive and a
# click to the stack drawn, on the Gateway with the most routes.
#
#   hack/bench-ui.sh                        # offline: ui -A --offline -f over the generated topology
#   KUBECONFIG=... hack/bench-ui.sh online  # online, beside `kubectl get effectivepolicy -o yaml` of the
#                                           # same route: a cluster with the topology loaded (hack/bench-e2e.sh)
#
# Environment: BENCH_SCALE (default 1), BENCH_RUNS (5), OUT (docs/benchmarks/ui.md),
# BENCH_BASE (a git ref, e.g. main: its plugin, with its committed page, is measured first in
# the same run, beside this tree's).
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
mode=${1:-offline}
scale=${BENCH_SCALE:-1}
out=${OUT:-docs/benchmarks/ui.md}
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-ui.XXXXXX")
trap 'rm -rf "$work"' EXIT
chromium=$(hack/chromium.sh)
hack/build-ui.sh
go build -o "$work/kubectl-effectivepolicy" ./cmd/kubectl-effectivepolicy
args=(-chromium "$chromium" -plugin "$work/kubectl-effectivepolicy" -runs "${BENCH_RUNS:-5}" -o "$out")
if [[ -n "${BENCH_BASE:-}" ]]; then
  mkdir "$work/base"
  git archive "$BENCH_BASE" | tar -x -C "$work/base"
  (cd "$work/base" && go build -o "$work/base-plugin" ./cmd/kubectl-effectivepolicy)
  args+=(-baseline "$work/base-plugin" -baseline-name "$BENCH_BASE ($(git rev-parse --short "$BENCH_BASE"))")
fi
case "$mode" in
  offline)
    go run ./test/scale/gen -scale="$scale" -gateway-crds -o "$work/topology.yaml"
    args+=(-f "$work/topology.yaml") ;;
  online)
    args+=(-kubeconfig "${KUBECONFIG:?online needs KUBECONFIG: a cluster with the topology loaded}") ;;
  *) echo "bench-ui: offline or online, not $mode" >&2; exit 2 ;;
esac
go run ./test/uibench "${args[@]}"
echo "bench-ui: wrote $out"
