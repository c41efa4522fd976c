#!/usr/bin/env bash
# `make test-flakes`: runs a test target several times in a row on a machine this script keeps
# busy itself, and fails if any run fails. A suite that passes here does not depend on the
# timing of a quiet machine (docs/reliability.md: how it was run, what it found).
#
# Environment:
#   FLAKE_RUNS           runs in a row (default 5)
#   FLAKE_TARGET         the make target of each run (default test-e2e; `test` for the whole suite)
#   FLAKE_LOAD_PER_CORE  busy workers per core, at the tests' own priority (default 2)
#   FLAKE_LOG_DIR        where each run's output and the summary go (default .local-flakes)
#   E2E_TIMEOUT          passed on to hack/e2e.sh (default here 60m: the suite runs slower under load,
#                        and a run that only hits go test's deadline finds nothing)
set -o errexit -o nounset -o pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RUNS=${FLAKE_RUNS:-5}
TARGET=${FLAKE_TARGET:-test-e2e}
PER_CORE=${FLAKE_LOAD_PER_CORE:-2}
LOG_DIR=${FLAKE_LOG_DIR:-$ROOT/.local-flakes}
export E2E_TIMEOUT=${E2E_TIMEOUT:-60m}
mkdir -p "$LOG_DIR"
summary="$LOG_DIR/summary.txt"

# The load: plain busy loops, unniced, so the tests compete for the cores as they do with other
# builds on a shared machine (a niced load would barely slow them).
workers=()
stop_load() {
  ((${#workers[@]} == 0)) || kill "${workers[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap stop_load EXIT
trap 'exit 130' INT TERM
n=$(($(nproc) * PER_CORE))
for _ in $(seq "$n"); do
  bash -c 'while :; do :; done' &
  workers+=($!)
done

{
  echo "test-flakes: $(date -u +%FT%TZ), make $TARGET x $RUNS, $n busy workers on $(nproc) cores"
  echo "test-flakes: commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
} | tee "$summary"
failed=0
for i in $(seq "$RUNS"); do
  log="$LOG_DIR/run-$i.log"
  t0=$SECONDS
  if make "$TARGET" >"$log" 2>&1; then result=pass; else result=FAIL; failed=$((failed + 1)); fi
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  line="run $i: $result in $((SECONDS - t0))s (load average $load) - $log"
  if [[ $result == FAIL ]]; then
    line+=$'\n'"$(grep -E -- '^(--- FAIL|FAIL|panic:|local-up: ERROR)|_test\.go:[0-9]+:' "$log" | head -n 20 | sed 's/^/    /')"
  fi
  echo "test-flakes: $line" | tee -a "$summary"
done
echo "test-flakes: $((RUNS - failed)) of $RUNS green" | tee -a "$summary"
((failed == 0))
