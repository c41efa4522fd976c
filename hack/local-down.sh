#!/usr/bin/env bash
# Stops what hack/local-up.sh started (the APIService first, so that nothing keeps discovering a
# server that is going away; then our server, kube-controller-manager, kube-apiserver, etcd) and
# removes the .local/ state, but for another control plane's state nested in it while that one still
# runs. Safe to run when nothing is up.
#
# Environment: EP_LOCAL_DIR (default <repo>/.local); EP_KEEP_LOGS=DIR copies .local/logs to DIR first.
set -o errexit -o nounset -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCAL="${EP_LOCAL_DIR:-$ROOT/.local}"
RUN="$LOCAL/run"

[[ -d "$LOCAL" ]] || { echo "local-down: nothing to do ($LOCAL does not exist)" >&2; exit 0; }

alive() { [[ -f "$RUN/$1.pid" ]] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }

stop() {
  local pid
  [[ -f "$RUN/$1.pid" ]] || return 0
  pid=$(cat "$RUN/$1.pid")
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
    echo "local-down: stopping $1 (pid $pid)" >&2
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$RUN/$1.pid"
}

if alive kube-apiserver && [[ -f "$LOCAL/kubeconfig" ]]; then
  kubectl --kubeconfig "$LOCAL/kubeconfig" delete apiservice v1alpha1.effectivepolicy.dev \
    --ignore-not-found --wait=false --request-timeout=10s >/dev/null 2>&1 || true
fi
for c in effectivepolicy-apiserver kube-controller-manager kube-apiserver etcd; do stop "$c"; done
# Any extra replicas started by tests (run/effectivepolicy-apiserver-*.pid).
for f in "$RUN"/*.pid; do [[ -e "$f" ]] && stop "$(basename "$f" .pid)"; done

if [[ -n "${EP_KEEP_LOGS:-}" && -d "$LOCAL/logs" ]]; then
  mkdir -p "$EP_KEEP_LOGS" && cp -r "$LOCAL/logs/." "$EP_KEEP_LOGS/"
  echo "local-down: logs copied to $EP_KEEP_LOGS" >&2
fi
# Another control plane's state nested in $LOCAL (a pid file of a live process outside $RUN) is kept:
# removing it would leave that control plane running on deleted files, unreachable.
keep=()
while IFS= read -r f; do
  pid=$(cat "$f" 2>/dev/null) || continue
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
    rel=${f#"$LOCAL"/}
    keep+=("${rel%%/*}")
  fi
done < <(find "$LOCAL" -path "$RUN" -prune -o -name '*.pid' -print)
if ((${#keep[@]} == 0)); then
  rm -rf "$LOCAL"
  echo "local-down: stopped; removed $LOCAL" >&2
  exit 0
fi
shopt -s dotglob nullglob
for e in "$LOCAL"/*; do
  [[ " ${keep[*]} " == *" $(basename "$e") "* ]] || rm -rf "$e"
done
echo "local-down: stopped; removed $LOCAL but $(printf '%s ' "${keep[@]}" | sort -u | tr -d '\n')(a control plane still runs from there: stop it with EP_LOCAL_DIR=$LOCAL/<that> hack/local-down.sh)" >&2
