#!/usr/bin/env bash
# `make test-flakes`: runs a test target several times on a machine kept busy, and fails if any
# run fails. A suite that passes here does not depend on the timing of a quiet machine
# (docs/reliability.md: how it was run, what it found).
#
# Two ways to keep the machine busy:
#   - in a row (FLAKE_AT_ONCE=1, the default): the runs one after another in this tree, against
#     busy workers this script starts;
#   - at once (FLAKE_AT_ONCE=N): N runs side by side, each in a fresh clone of HEAD, so each run's
#     load is the others' real work (compilers, linters, control planes) rather than idle loops,
#     and five runs cost about what one costs against the busy workers.
#
# Environment:
#   FLAKE_RUNS           how many runs (default 5)
#   FLAKE_AT_ONCE        how many run side by side (default 1)
#   FLAKE_TARGET         the make target of each run (default test-e2e; `test` for the whole suite)
#   FLAKE_LOAD_PER_CORE  busy workers per core, at the tests' own priority (default 2 in a row,
#                        0 at once)
#   FLAKE_LOG_DIR        where each run's output and the summary go (default .local-flakes)
#   E2E_TIMEOUT          passed on to hack/e2e.sh (default here 60m: the suite runs slower under load,
#                        and a run that only hits go test's deadline finds nothing)
set -o errexit -o nounset -o pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RUNS=${FLAKE_RUNS:-5}
AT_ONCE=${FLAKE_AT_ONCE:-1}
TARGET=${FLAKE_TARGET:-test-e2e}
if ((AT_ONCE > 1)); then PER_CORE=${FLAKE_LOAD_PER_CORE:-0}; else PER_CORE=${FLAKE_LOAD_PER_CORE:-2}; fi
LOG_DIR=${FLAKE_LOG_DIR:-$ROOT/.local-flakes}
export E2E_TIMEOUT=${E2E_TIMEOUT:-60m}
mkdir -p "$LOG_DIR"
LOG_DIR=$(cd "$LOG_DIR" && pwd)
summary="$LOG_DIR/summary.txt"
loads="$LOG_DIR/load.txt"

# Background work: plain busy loops, unniced, so the tests compete for the cores as they do with
# other builds on a shared machine (a niced load would barely slow them); and a sampler of the
# load average, so the summary can say how busy the machine really was.
background=()
runs=()
stop_background() {
  ((${#runs[@]} == 0)) || kill -- "${runs[@]}" 2>/dev/null || true
  ((${#background[@]} == 0)) || kill "${background[@]}" 2>/dev/null || true
}
trap stop_background EXIT
trap 'exit 130' INT TERM
n=$(($(nproc) * PER_CORE))
for _ in $(seq "$n"); do
  bash -c 'while :; do :; done' &
  background+=($!)
done
: >"$loads"
(while :; do cut -d' ' -f1 /proc/loadavg >>"$loads"; sleep 15; done) &
background+=($!)

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
{
  echo "test-flakes: $(date -u +%FT%TZ), make $TARGET x $RUNS, $AT_ONCE at once, $n busy workers on $(nproc) cores"
  if ((AT_ONCE > 1)); then
    echo "test-flakes: commit $commit, each run in a fresh clone of it"
  else
    echo "test-flakes: commit $commit$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
  fi
} | tee "$summary"

# run I: one run of the target; prints its summary line (and the failing tests' lines).
run() {
  local i=$1 log="$LOG_DIR/run-$1.log" dir=$ROOT t0=$SECONDS result=pass
  if ((AT_ONCE > 1)); then
    dir="$LOG_DIR/run-$i"
    rm -rf "$dir" && git clone -q "$ROOT" "$dir"
  fi
  (cd "$dir" && make "$TARGET") >"$log" 2>&1 || result=FAIL
  if ((AT_ONCE > 1)) && [[ $result == pass ]]; then rm -rf "$dir"; fi
  local line="run $i: $result in $((SECONDS - t0))s (load average $(cut -d' ' -f1-3 /proc/loadavg)) - $log"
  if [[ $result == FAIL ]]; then
    line+=$'\n'"$(grep -E -- '^(--- FAIL|FAIL|panic:|local-up: ERROR|make: \*\*\*)|_test\.go:[0-9]+:' "$log" | head -n 20 | sed 's/^/    /')"
  fi
  echo "test-flakes: $line" | tee -a "$summary"
  [[ $result == pass ]]
}

failed=0
# wait_one: waits for one of the runs side by side to end, and counts it if it failed.
wait_one() {
  local done_pid=
  wait -n -p done_pid "${runs[@]}" || failed=$((failed + 1))
  local left=()
  for pid in "${runs[@]}"; do [[ $pid == "$done_pid" ]] || left+=("$pid"); done
  runs=("${left[@]}")
}
for i in $(seq "$RUNS"); do
  if ((AT_ONCE == 1)); then
    run "$i" || failed=$((failed + 1))
    continue
  fi
  ((${#runs[@]} < AT_ONCE)) || wait_one
  run "$i" &
  runs+=($!)
  sleep 20 # the clones start their heaviest steps (codegen, lint) a little apart
done
while ((${#runs[@]} > 0)); do wait_one; done
sort -n "$loads" | awk '{ v[NR] = $1; s += $1 } END {
  if (NR) printf "test-flakes: load average (1 min) over the runs: min %s, median %s, mean %.1f, max %s (%d samples)\n", v[1], v[int((NR + 1) / 2)], s / NR, v[NR], NR }' | tee -a "$summary"
echo "test-flakes: $((RUNS - failed)) of $RUNS green" | tee -a "$summary"
((failed == 0))
