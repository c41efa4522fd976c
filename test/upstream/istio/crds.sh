#!/bin/bash
# The CRDs of the Istio policy kinds the profile describes, verbatim from the newest Istio API release the
# Go module proxy serves (istio.io/api v1.32.0, kubernetes/customresourcedefinitions.gen.yaml), fetched
# through the Go module proxy.
set -euo pipefail
d=$(go mod download -json istio.io/api@v1.32.0 | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
awk -v want="authorizationpolicies.security.istio.io requestauthentications.security.istio.io wasmplugins.extensions.istio.io trafficextensions.extensions.istio.io envoyfilters.networking.istio.io telemetries.telemetry.istio.io" '
  BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) keep[w[i]] = 1 }
  function flush() { if (doc != "" && name in keep) { printf "---\n%s", doc }; doc = ""; name = "" }
  /^---$/ { flush(); next }
  /^  name: / && name == "" { name = $2 }
  { doc = doc $0 "\n" }
  END { flush() }' "$d/kubernetes/customresourcedefinitions.gen.yaml"
