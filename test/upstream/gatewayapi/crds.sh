#!/bin/bash
# Gateway API's policy CRDs used by the cases in this folder (BackendTLSPolicy, XBackendTrafficPolicy), taken from
# the experimental channel of the released Go module sigs.k8s.io/gateway-api v1.6.3 (fetched through the Go module
# proxy at check time). hack/local-up.sh installs the same files with the rest of the channel. The files do not
# start with a document separator, so one is printed before each.
set -euo pipefail
g=$(go mod download -json sigs.k8s.io/gateway-api@v1.6.3 | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
for f in gateway.networking.k8s.io_backendtlspolicies.yaml gateway.networking.x-k8s.io_xbackendtrafficpolicies.yaml; do
  echo ---
  cat "$g/config/crd/experimental/$f"
done
