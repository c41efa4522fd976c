#!/bin/bash
# kgateway's policy CRDs (the four kinds of gateway.kgateway.dev labeled gateway.networking.k8s.io/policy:
# BackendConfigPolicy, HTTPListenerPolicy, ListenerPolicy, TrafficPolicy) and Backend (a backendRef and
# BackendConfigPolicy target) from the released Go module
# github.com/kgateway-dev/kgateway/v2 v2.2.0 (install/helm/kgateway-crds/templates is part of the root module).
set -euo pipefail
k=$(go mod download -json github.com/kgateway-dev/kgateway/v2@v2.2.0 | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
[[ -n "$k" && -d "$k/install/helm/kgateway-crds/templates" ]] || { echo "crds.sh: kgateway v2.2.0 not available" >&2; exit 1; }
for crd in backendconfigpolicies backends httplistenerpolicies listenerpolicies trafficpolicies; do
  echo "---"
  sed '/^---$/d' "$k/install/helm/kgateway-crds/templates/gateway.kgateway.dev_$crd.yaml"
done
