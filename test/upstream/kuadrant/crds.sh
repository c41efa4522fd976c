#!/bin/bash
# Kuadrant's policy CRDs used by the cases in this folder (RateLimitPolicy, AuthPolicy, TokenRateLimitPolicy,
# DNSPolicy, TLSPolicy), taken from the released Go module kuadrant-operator v1.5.2 (fetched through the Go
# module proxy at check time).
set -euo pipefail
k=$(go mod download -json github.com/kuadrant/kuadrant-operator@v1.5.2 | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
cat "$k/config/crd/bases/kuadrant.io_ratelimitpolicies.yaml" \
    "$k/config/crd/bases/kuadrant.io_authpolicies.yaml" \
    "$k/config/crd/bases/kuadrant.io_tokenratelimitpolicies.yaml" \
    "$k/config/crd/bases/kuadrant.io_dnspolicies.yaml" \
    "$k/config/crd/bases/kuadrant.io_tlspolicies.yaml"
