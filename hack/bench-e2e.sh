#!/usr/bin/env bash
# End-to-end half of `make bench` (issue #7): the server measured through
# kube-apiserver's aggregator on the local control plane (hack/local-up.sh).
# Writes docs/benchmarks/e2e.md and docs/benchmarks/e2e.json.
#
#   hack/bench-e2e.sh                   # scale 1: 46,114 objects, ~40,000 outputs;
#                                       # 9 min on the 2-core machine lightly shared, 24 min
#                                       # heavily shared (loading alone: 3.5-11 min); the
#                                       # server peaks at ~4.3 GiB RSS, the client at ~2 GiB
#   BENCH_SCALE=0.05 hack/bench-e2e.sh  # quick run (OUT defaults to a temp dir then)
#   make bench                          # in-process benchmarks, then this
#   BENCH_ONLY=e2e make bench           # only this
#
# Steps (test/scale/e2ebench does the measuring):
#   1. make build; a private control plane in $EP_LOCAL_DIR (default
#      .local-bench, beside and not inside `make local-up`'s .local, which local-down removes whole) with
#      EP_SKIP_SERVER=1: etcd, kube-apiserver, kube-controller-manager, the
#      Gateway API CRDs, the APIService. The control-plane binaries are built
#      (first time, slow) or reused from ~/.cache/effectivepolicy/bin.
#   2. `e2ebench load`: the generated topology (test/scale) is created with
#      the dynamic client (high QPS, 48 workers): policy CRDs first, waited on
#      until Established, then Namespaces, then everything else. Services are
#      created headless: the local Service CIDR is a /24. Timed.
#   3. `hack/local-up.sh start-server` while `e2ebench ready` polls the
#      server's /readyz: process start → ready. The server logs the informer
#      sync and first-computation durations.
#   4. `e2ebench measure`: LIST of every EffectivePolicy vs every HTTPRoute
#      (same client, alternately), GET p50/p99 at concurrency 16, two policy
#      edits timed to the last expected watch event, the server's peak RSS
#      and the bbolt file size; writes the report with issue #7's targets.
#      The edits: a Gateway-level policy of median reach and the policy of the
#      smallest reach >= 200 outputs (at scale 1 a listener policy; nothing in
#      the generator reaches ~200 exactly). Each writes a new value into a
#      marker field no other policy sets; a first, unmeasured edit adds the
#      field and the outputs it changes are the expected set (a new field
#      survives a patch merge, so it also changes outputs where the policy was
#      entirely Overridden: the LIST's Enforced/PartiallyEnforced sources alone
#      under-count). The report's "How it is measured" lists every decision.
#   5. `e2ebench restart`: the server stopped and started again on its cache;
#      the time from the new process's start to the first GET of a restored
#      EffectivePolicy (own port, through kube-apiserver) joins the report.
#   6. The control plane is always torn down (trap), even on failure.
#
# Environment:
#   BENCH_SCALE        topology scale (default 1)
#   BENCH_SEED         generator seed (default 1)
#   BENCH_GETS         single GETs (default 4000)
#   BENCH_LIST_REPS    LIST repetitions per resource (default 3)
#   BENCH_EDITS        repetitions of each policy edit (default 20)
#   BENCH_GOMEMLIMIT   the server's GOMEMLIMIT (default off: the Go GC's default, a heap of up
#                      to twice the live data). 900MiB was tried at scale 1: peak RSS 1.19 GiB
#                      instead of ~2 GiB, but 3x the server's CPU in garbage collection, ready
#                      in 30 s instead of 18 s, slower LISTs, GETs and edits
#                      (docs/benchmarks/README.md)
#   BENCH_KEEP_UP=1    leave the control plane running afterwards
#   OUT                report path without extension (default docs/benchmarks/e2e at
#                      scale 1, $TMPDIR/e2e-<scale> otherwise, so quick runs never
#                      overwrite the committed report)
#   EP_LOCAL_DIR       control-plane state directory (default <repo>/.local-bench)
#   EP_SERVER_FLAGS    extra server flags, passed to hack/local-up.sh
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
GO=${GO:-go}
BENCH_SCALE=${BENCH_SCALE:-1}
BENCH_SEED=${BENCH_SEED:-1}
BENCH_GOMEMLIMIT=${BENCH_GOMEMLIMIT:-off}
export EP_LOCAL_DIR=${EP_LOCAL_DIR:-${ROOT}/.local-bench}
if [[ -z "${OUT:-}" ]]; then
  if [[ "${BENCH_SCALE}" == 1 ]]; then OUT=docs/benchmarks/e2e; else OUT="${TMPDIR:-/tmp}/e2e-${BENCH_SCALE}"; fi
fi
TMP=$(mktemp -d)
log() { echo "bench-e2e: $*" >&2; }

cleanup() {
  local rc=$?
  if [[ -n "${READY_PID:-}" ]]; then kill "${READY_PID}" 2>/dev/null || true; fi
  if [[ -n "${START_PID:-}" ]]; then kill "${START_PID}" 2>/dev/null || true; fi
  if [[ "${BENCH_KEEP_UP:-}" == 1 ]]; then
    log "BENCH_KEEP_UP=1: control plane left running in ${EP_LOCAL_DIR} (hack/local-down.sh with EP_LOCAL_DIR to stop)"
  else
    EP_KEEP_LOGS="${TMP}/logs" hack/local-down.sh >/dev/null 2>&1 || true
    rmdir "${EP_LOCAL_DIR%/*}" 2>/dev/null || true # .local, if nothing else is in it
    if ((rc != 0)) && [[ -d "${TMP}/logs" ]]; then
      mkdir -p "${OUT%/*}" && rm -rf "${OUT}-logs" && cp -r "${TMP}/logs" "${OUT}-logs" &&
        log "failed (exit ${rc}); control-plane logs kept in ${OUT}-logs"
    fi
  fi
  rm -rf "${TMP}"
  exit "${rc}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start=$(date -u +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# A leftover control plane of an interrupted run would carry its objects.
hack/local-down.sh >/dev/null 2>&1 || true

log "building the server and e2ebench"
"${GO}" build -o bin/effectivepolicy-apiserver ./cmd/effectivepolicy-apiserver
"${GO}" build -o bin/kubectl-effectivepolicy ./cmd/kubectl-effectivepolicy
# The anchor: gwctl, the Gateway API project's own tool, from its Go module at
# the one version the module proxy serves here, built once and cached. Not
# with `go install pkg@version`: that asks the proxy for the module's version
# list (for deprecations), which it refuses; the module's own directory is
# built instead, with its own go.mod and go.sum. A failed build leaves gwctl
# out of the report rather than failing the run.
GWCTL_VERSION=${GWCTL_VERSION:-v0.1.0}
gwctl_path() {
  local bin_dir dir
  bin_dir=${XDG_CACHE_HOME:-${HOME}/.cache}/effectivepolicy/tools/gwctl-${GWCTL_VERSION}-$("${GO}" env GOVERSION)
  if [[ ! -x "${bin_dir}/gwctl" ]]; then
    log "building sigs.k8s.io/gwctl@${GWCTL_VERSION} into ${bin_dir} (once; about 2 minutes)"
    dir=$(cd "${TMP}" && GOWORK=off GOFLAGS=-mod=mod "${GO}" mod download -json "sigs.k8s.io/gwctl@${GWCTL_VERSION}" |
      sed -n 's/.*"Dir": "\(.*\)".*/\1/p') || return 1
    [[ -n "${dir}" ]] || return 1
    mkdir -p "${bin_dir}"
    (cd "${dir}" && GOWORK=off GOFLAGS=-mod=readonly GOTOOLCHAIN=local "${GO}" build -o "${bin_dir}/gwctl.partial" .) >&2 || return 1
    mv "${bin_dir}/gwctl.partial" "${bin_dir}/gwctl"
  fi
  echo "${bin_dir}/gwctl"
}
GWCTL=$(gwctl_path) || { log "gwctl ${GWCTL_VERSION} did not build; not measured"; GWCTL=; }
"${GO}" build -o "${TMP}/e2ebench" ./test/scale/e2ebench

log "starting the control plane without the server (${EP_LOCAL_DIR})"
# Ports are picked at random among the free ones; on a machine shared with
# other control planes one can be taken before it is bound: retry afresh.
for attempt in 1 2 3; do
  if EP_SKIP_SERVER=1 hack/local-up.sh; then break; fi
  ((attempt < 3)) || exit 1
  log "local-up failed (attempt ${attempt}); retrying with new ports"
  hack/local-down.sh >/dev/null 2>&1 || true
done
KUBECONFIG_FILE="${EP_LOCAL_DIR}/kubeconfig"

log "loading the topology at scale ${BENCH_SCALE}"
"${TMP}/e2ebench" load -kubeconfig "${KUBECONFIG_FILE}" -scale "${BENCH_SCALE}" -seed "${BENCH_SEED}" -o "${TMP}/load.json"

log "starting the server"
"${TMP}/e2ebench" ready -local "${EP_LOCAL_DIR}" -o "${TMP}/ready.json" &
READY_PID=$!
# Readiness can take minutes at scale 1; local-up waits for each step this long.
# BENCH_GOMEMLIMIT sets the server's Go soft memory limit, as the Deployment
# does from the container's memory limit (artifacts/); "off" is Go's default.
GOMEMLIMIT=${BENCH_GOMEMLIMIT} EP_WAIT_SECONDS=${EP_WAIT_SECONDS:-1200} hack/local-up.sh start-server &
START_PID=$!
wait "${READY_PID}"
READY_PID=
# local-up then waits for `kubectl get effectivepolicies -A` to answer (the
# whole list, as a table): give it 5 minutes after /readyz, then stop
# waiting (the script only; the server runs on).
for _ in $(seq 300); do kill -0 "${START_PID}" 2>/dev/null || break; sleep 1; done
if kill -0 "${START_PID}" 2>/dev/null; then
  log "local-up start-server still waiting for kubectl 5 min after /readyz; not waiting longer"
  kill "${START_PID}" 2>/dev/null || true
else
  wait "${START_PID}"
fi
START_PID=

log "measuring"
mkdir -p "${OUT%/*}"
"${TMP}/e2ebench" measure -kubeconfig "${KUBECONFIG_FILE}" -local "${EP_LOCAL_DIR}" \
  -load "${TMP}/load.json" -ready "${TMP}/ready.json" -o "${OUT}" -plugin-dir bin -profile-dir "${TMP}/profiles" \
  -gwctl "${GWCTL}" -gwctl-version "${GWCTL_VERSION}" \
  -gets "${BENCH_GETS:-4000}" -list-reps "${BENCH_LIST_REPS:-3}" -edits "${BENCH_EDITS:-20}" \
  -machine "date=$(date -u '+%Y-%m-%d %H:%M UTC')" \
  -machine "commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  -machine "load average (1/5/15 min) before the run=${load_before}" \
  -machine "server GOMEMLIMIT=${BENCH_GOMEMLIMIT}"
# The server's CPU profiles of the LIST and GET paths, taken after the
# measurement, as text beside the report.
for p in list get; do
  if [[ -f "${TMP}/profiles/profile-${p}.pb.gz" ]]; then
    { # by own time, then by time including callees (which filters and handlers it goes to)
      "${GO}" tool pprof -top -nodecount=30 bin/effectivepolicy-apiserver "${TMP}/profiles/profile-${p}.pb.gz"
      echo
      "${GO}" tool pprof -top -cum -nodecount=40 bin/effectivepolicy-apiserver "${TMP}/profiles/profile-${p}.pb.gz" |
        sed -n '/flat%/,$p'
    } >"${OUT}-profile-${p}.txt" 2>/dev/null
  fi
done
# Last: the server stopped and started again on the cache it wrote; the time
# until it serves a restored EffectivePolicy is added to the report.
log "restarting the server on its warm cache"
GOMEMLIMIT=${BENCH_GOMEMLIMIT} EP_WAIT_SECONDS=${EP_WAIT_SECONDS:-1200} \
  "${TMP}/e2ebench" restart -kubeconfig "${KUBECONFIG_FILE}" -local "${EP_LOCAL_DIR}" -report "${OUT}"
log "wrote ${OUT}.md and ${OUT}.json in $(($(date -u +%s) - start)) s"
