#!/bin/bash
# Real policy CRDs from their projects' Go modules (fetched through the Go module proxy at check time):
# the five Envoy Gateway v1.9.0 policy kinds the cases of this folder use.
set -euo pipefail
e=$(go mod download -json github.com/envoyproxy/gateway@v1.9.0 | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
for k in backendtrafficpolicies clienttrafficpolicies envoyextensionpolicies envoypatchpolicies securitypolicies; do
  echo "---"
  sed '/^---$/d' "$e/charts/gateway-helm/charts/crds/crds/generated/gateway.envoyproxy.io_$k.yaml"
done
