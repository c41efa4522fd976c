#!/usr/bin/env bash
# The project's one way to wait for a condition of Kubernetes objects (hack/, make demo and the
# end-to-end tests all call it).
#
#   hack/wait-condition.sh [--timeout SECONDS] CONDITION KUBECTL-GET-ARGS...
#
# e.g. `hack/wait-condition.sh Established -f crds.yaml` or `... Established crd --all`. Polls
# `kubectl get KUBECTL-GET-ARGS` until every object it names has the condition CONDITION with
# status True, and fails after --timeout seconds (default 120) naming the objects still waiting.
#
# Why not `kubectl wait --for=condition=...`: an object created a moment ago has no
# status.conditions yet, and kubectl wait (v1.32) then errors ("accessor error: <nil> is of the
# type <nil>") instead of waiting. Here an object without the condition simply is not ready yet.
# KUBECTL (default kubectl) and KUBECONFIG are taken from the environment; --kubeconfig may also
# be passed among the get arguments.
set -o errexit -o nounset -o pipefail

timeout=120
if [[ ${1:-} == --timeout ]]; then
  timeout=$2
  shift 2
fi
if (($# < 2)); then
  echo "usage: $0 [--timeout SECONDS] CONDITION KUBECTL-GET-ARGS..." >&2
  exit 2
fi
condition=$1
shift
kubectl_bin=${KUBECTL:-kubectl}

# One line per object, "name status" (custom-columns prints <none> for a missing condition, and
# it reads a single object and a list alike).
columns="NAME:.metadata.name,STATUS:.status.conditions[?(@.type==\"$condition\")].status"
deadline=$((SECONDS + timeout))
last=""
while :; do
  if out=$("$kubectl_bin" get "$@" --no-headers -o "custom-columns=$columns" 2>&1); then
    waiting=$(awk '$2 != "True" { print $1 }' <<<"$out")
    if [[ -n $out && -z $waiting ]]; then
      exit 0
    fi
    last="not yet $condition: $(tr '\n' ' ' <<<"$waiting")"
    [[ -n $out ]] || last="no objects yet"
  else
    # The objects may not exist yet either (a get right after a create can race the cache).
    last=$out
  fi
  if ((SECONDS >= deadline)); then
    echo "wait-condition: timed out after ${timeout}s waiting for $condition on $*: $last" >&2
    exit 1
  fi
  sleep 0.5
done
