#!/bin/bash
# NGINX Gateway Fabric's CRDs used by the cases in this folder (every policy kind of gateway.nginx.org:
# ClientSettingsPolicy, ObservabilityPolicy, ProxySettingsPolicy, RateLimitPolicy, SnippetsPolicy,
# UpstreamSettingsPolicy, WAFPolicy; and NginxProxy, which the ObservabilityPolicy and WAFPolicy cases' Gateways
# reference), from the released Go module
# github.com/nginx/nginx-gateway-fabric/v2 v2.6.7 (the repository was renamed from nginxinc/; since v2 the module
# path ends in /v2). config/crd/bases/ is part of the root module, so it is in the module zip.
# If the module proxy does not serve that module, set NGF_SRC to a checkout of the v2.6.7 tag instead.
set -euo pipefail
if [[ -n "${NGF_SRC:-}" ]]; then
  n=$NGF_SRC
else
  n=$(go mod download -json github.com/nginx/nginx-gateway-fabric/v2@v2.6.7 | sed -n 's/.*"Dir": "\(.*\)",/\1/p') || n=
fi
[[ -n "$n" && -d "$n/config/crd/bases" ]] || { echo "crds.sh: NGINX Gateway Fabric v2.6.7 not available (set NGF_SRC)" >&2; exit 1; }
for crd in clientsettingspolicies observabilitypolicies proxysettingspolicies ratelimitpolicies snippetspolicies \
  upstreamsettingspolicies wafpolicies nginxproxies; do
  cat "$n/config/crd/bases/gateway.nginx.org_$crd.yaml" # each file starts with ---
done
