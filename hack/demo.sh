#!/usr/bin/env bash
# `make demo`: brings up the local control plane (hack/local-up.sh) and tells GEP-713's
# discoverability parable with it. Ana owns the "baker" namespace and may only `view` it; a
# namespace-wide RetryPolicy she cannot read retries every request of her service. With
# EffectivePolicy she can see *that*, *which* and *what* policies reach her route; the kubectl
# plugin (bin/kubectl-effectivepolicy) draws it, and says what a proposed change would do.
# The control plane keeps running afterwards; stop it with `make local-down`.
set -o errexit -o nounset -o pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCAL="${EP_LOCAL_DIR:-$ROOT/.local}"
cd "$ROOT"

"$ROOT/hack/local-up.sh"
export KUBECONFIG="$LOCAL/kubeconfig"
# kubectl runs bin/kubectl-effectivepolicy (built by `make build`) as `kubectl effectivepolicy`.
export PATH="$ROOT/bin:$PATH"
kc() { kubectl "$@"; }

bold() { if [[ -t 1 ]]; then printf '\n\033[1m%s\033[0m\n' "$*"; else printf '\n%s\n' "$*"; fi; }
run() { # prints and runs a command as shown to the user
  printf '$ %s\n' "$*"
  "$@" 2>&1 | sed 's/^/  /' || true
}
ana() { kc --as ana "$@"; }

bold "Setting the scene: policy kinds, Gateway, routes and services (hack/demo/)"
kc apply -f hack/demo/00-crds.yaml >/dev/null
hack/wait-condition.sh Established -f hack/demo/00-crds.yaml
kc apply -f hack/demo/10-topology.yaml >/dev/null
# Policies one second apart, so that their creationTimestamps (and thus their precedence) differ.
for f in hack/demo/20-retry-all.yaml hack/demo/30-gateway.yaml hack/demo/40-route.yaml; do
  kc apply -f "$f" >/dev/null
  sleep 1
done
# Give the server a moment to see the new policy kinds and compute.
computed=0
for _ in $(seq 60); do
  if [[ "$(kc get effectivepolicy baker -n baker -o jsonpath='{.targets[*].policies[*].kind}' 2>/dev/null)" == *TimeoutPolicy* ]]; then
    computed=1
    break
  fi
  sleep 0.5
done
if [[ $computed == 0 ]]; then
  echo "demo: WARNING: after 30s the server still shows no TimeoutPolicy on baker/baker;" \
    "see $LOCAL/logs/effectivepolicy-apiserver.log" >&2
fi

cat <<'TXT'

  It's a sunny Wednesday afternoon. Ana, lead developer of the `baker` service at Evil Genius
  Cupcakes, deployed version 3.6.0 this morning. Chihiro in the NOC reports that `baker` takes far
  more load than its clients send: requests are being retried. Ana never configured retries.
  She has the built-in `view` role in her namespace (kubectl --as ana), nothing more.
TXT

bold "1. Ana looks for retry policies — and is not allowed to (the parable's dead end):"
run kubectl --as ana get retrypolicies.demo.effectivepolicy.dev -n baker

bold "2. But she may read the effective policies of her namespace — THAT policies reach her objects:"
printf '$ kubectl --as ana get effectivepolicies -n baker\n'
ana get effectivepolicies -n baker 2>&1 | sed 's/^/  /' || true

bold "3. WHICH policies reach her route (and its Service, which shares the name), and WHAT they amount to:"
printf '$ kubectl --as ana get effectivepolicy baker -n baker -o yaml\n'
ana get effectivepolicy baker -n baker -o yaml 2>&1 | sed 's/^/  /' || true

bold "4. The policy itself stays out of her reach:"
run kubectl --as ana get retrypolicy retry-all -n baker -o yaml
run kubectl --as ana auth can-i get effectivepolicies -n baker
run kubectl --as ana auth can-i get retrypolicies.demo.effectivepolicy.dev -n baker

bold "5. What happens to GET / on her host? She traces it (a RequestTrace is answered, never stored):"
run cat hack/demo/trace-baker.yaml
# --validate=false: kubectl's client-side check of a kind without a PATCH endpoint (every review
# kind, SelfSubjectAccessReview too) lists CRDs, which Ana may not (docs/requesttrace.md).
printf '$ kubectl --as ana create -f hack/demo/trace-baker.yaml -o yaml --validate=false\n'
ana create -f hack/demo/trace-baker.yaml -o yaml --validate=false 2>&1 | sed 's/^/  /' || true

bold "6. And Chihiro, before deleting the namespace-wide policy, asks where it is used (its PolicyReach):"
run kubectl get policyreach retry-all -n baker
printf '$ kubectl get policyreach retry-all -n baker -o yaml\n'
kc get policyreach retry-all -n baker -o yaml 2>&1 | sed 's/^/  /' || true

bold "7. The same answers, drawn for humans: the kubectl plugin (docs/plugin.md). Ana describes her route:"
run kubectl effectivepolicy describe httproute/baker -n baker --as ana

bold "8. Chihiro proposes to retry once at most. Before applying it, he asks what it would change:"
run cat hack/demo/proposed/retry-all-1.yaml
# An EffectivePolicyReview: computed, never applied. Creating one needs cluster-wide rights (the
# cluster admin here); the exit status is kubectl diff's (1: effective policies would change).
run kubectl effectivepolicy diff -f hack/demo/proposed/retry-all-1.yaml
printf '\n'
printf '%s\n' "Ana, with only view in her namespace, previews her own change the same way (reviews are open to every"
printf '%s\n' "authenticated user and answer with what she may read):"
run cat hack/demo/proposed/baker-timeouts-5s.yaml
run kubectl effectivepolicy diff -f hack/demo/proposed/baker-timeouts-5s.yaml --as ana

bold "9. Chihiro's platform rules, written down and checked (docs/check.md; exit status 1: one fails):"
run cat hack/demo/check/expectations.yaml
run kubectl effectivepolicy check -f hack/demo/check/expectations.yaml
printf '$ kubectl apply -f hack/demo/check/frosting-timeouts.yaml   # the frosting route gets its own timeout\n'
kc apply -f hack/demo/check/frosting-timeouts.yaml 2>&1 | sed 's/^/  /'
# The server computes the change shortly after it lands.
for _ in $(seq 60); do
  kubectl effectivepolicy check -f hack/demo/check/expectations.yaml >/dev/null 2>&1 && break
  sleep 0.5
done
run kubectl effectivepolicy check -f hack/demo/check/expectations.yaml
bold "10. A policy that stops working: its route was renamed, it reaches nothing, and the alert says so:"
run cat hack/demo/alert/stale-policy.yaml
kc apply -f hack/demo/alert/stale-policy.yaml >/dev/null
# The server's /metrics, as a Prometheus would scrape it (the local admin's client certificate);
# the alerts' expressions evaluated on it with Prometheus's own engine (test/alerts, alerteval).
metrics="$LOCAL/metrics.txt"
source "$LOCAL/ports.env"
for _ in $(seq 60); do
  curl -sf --cacert "$LOCAL/pki/ca.crt" --cert "$LOCAL/pki/admin.crt" --key "$LOCAL/pki/admin.key" \
    "https://127.0.0.1:$SERVER_PORT/metrics" >"$metrics" 2>/dev/null &&
    grep -q 'effectivepolicy_policies_reaching_nothing{.*TimeoutPolicy.*} [1-9]' "$metrics" && break
  sleep 0.5
done
printf '$ curl .../metrics | grep reaching_nothing\n'
grep '^effectivepolicy_policies_reaching_nothing' "$metrics" | sed 's/^/  /'
printf '$ alerteval -rules charts/effectivepolicy/monitoring/alerts.yaml server=metrics.txt   # Prometheus'"'"'s engine\n'
(cd test/alerts && go run . -rules "$ROOT/charts/effectivepolicy/monitoring/alerts.yaml" "server=$metrics") 2>&1 | sed 's/^/  /' || true
printf '  (each alert holds for 10 minutes before it fires; the PolicyReach names the policy)\n'
run kubectl get policyreach bakery-timeouts -n baker
kc delete -f hack/demo/alert/stale-policy.yaml >/dev/null

bold "11. And in a browser (docs/ui.md): the hierarchy as a graph colored by outcome, a click for a stack:"
# The page's server reads the cluster with the kubeconfig's credentials, on loopback; setsid: it
# outlives this script, and make local-down stops it with the control plane (run/ui.pid).
setsid "$ROOT/bin/kubectl-effectivepolicy" ui -A --port "${EP_UI_PORT:-0}" >"$LOCAL/logs/ui.log" 2>&1 </dev/null &
echo $! >"$LOCAL/run/ui.pid"
for _ in $(seq 50); do grep -q 'http://' "$LOCAL/logs/ui.log" && break; sleep 0.2; done
printf '$ kubectl effectivepolicy ui -A\n'
sed 's/^/  /' "$LOCAL/logs/ui.log"
printf '$ kubectl effectivepolicy describe httproute/baker -n baker --as ana --html %s\n' "$LOCAL/ana-baker.html"
kubectl effectivepolicy describe httproute/baker -n baker --as ana --html "$LOCAL/ana-baker.html" >/dev/null 2>&1 ||
  echo "  (the page could not be written)"
printf '  (step 7'"'"'s tree, as one page that opens with no network)\n'

cat <<TXT

The control plane and the page keep running. Try it yourself:
  export KUBECONFIG=$LOCAL/kubeconfig PATH=$ROOT/bin:\$PATH
  kubectl --as ana get effectivepolicies -n baker
  kubectl get effectivepolicies -A --watch
  kubectl get policyreaches -A
  kubectl --as ana create -f hack/demo/trace-baker.yaml -o yaml --validate=false
  kubectl effectivepolicy reach retrypolicy/retry-all -n baker
  kubectl effectivepolicy trace --host baker.cupcakes.example --as ana
  kubectl effectivepolicy diff --delete retrypolicy/retry-all -n baker
  kubectl effectivepolicy check --offline -f hack/demo/check/expectations.yaml -f hack/demo
  kubectl effectivepolicy ui -n baker --as ana       # Ana's page
Stop them with:  make local-down
TXT
