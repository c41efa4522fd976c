#!/usr/bin/env bash
# Tells a fuzzing finding from the Go 1.26 fuzz coordinator's shutdown race (sourced by
# hack/fuzz.sh).
#
# With a duration -fuzztime, go1.26's internal/fuzz wraps its context in WithTimeout and, when the
# deadline fires, compares the worker's error against the child context's error before the child
# has been cancelled; a worker mid-input then fails the target with a bare "context deadline
# exceeded" and nothing else (golang/go#75804, fixed in Go 1.27). The project is pinned to Go
# 1.26, so the race is recognized here, and only by its whole signature: the target's FAIL line
# followed by that one message and nothing else, and no input written. Anything else a failing
# run prints (a panic, a t.Error, "Failing input written to") is a finding.

# fuzzoutcome::classify LOG: prints "deadline-race" when LOG (the output of one failed
# `go test -fuzz` run) carries only the race's signature, "finding" otherwise.
fuzzoutcome::classify() {
  local log=$1
  if grep -q -e 'Failing input written to' -e '^panic:' -e '^[[:space:]]*panic:' "$log"; then
    echo finding; return
  fi
  # The lines between "--- FAIL: Fuzz..." and the package's FAIL line, indented: the failure's
  # messages.
  local messages
  messages=$(awk '
    /^--- FAIL: Fuzz/ { in_fail = 1; fails++; next }
    in_fail && /^(FAIL|exit status|ok )/ { in_fail = 0 }
    in_fail && /^[[:space:]]+[^[:space:]]/ { sub(/^[[:space:]]+/, ""); print }
    END { if (fails != 1) print "fails:" fails }
  ' "$log")
  if [[ "$messages" == "context deadline exceeded" ]]; then
    echo deadline-race
  else
    echo finding
  fi
}
