#!/usr/bin/env bash
# The Helm chart's checks (`make verify`, through hack/verify.sh): `helm lint` and `helm template`
# of charts/effectivepolicy with each serving-certificate mode and with the PodDisruptionBudget
# off. `hack/helm.sh --print-path` only builds helm (once) and prints the binary's path.
#
# helm is built from the Go module proxy at the pinned HELM_VERSION and cached
# (hack/lib/gotool.sh: with this module's Go, outside this module, as golangci-lint). A cold
# build takes about 3 minutes on 2 cores.
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"

HELM_VERSION=${HELM_VERSION:-v4.3.1}
CHART=charts/effectivepolicy
# shellcheck source=lib/gotool.sh
source "${ROOT}/hack/lib/gotool.sh"
HELM=$(gotool::path helm "helm.sh/helm/${HELM_VERSION%%.*}/cmd/helm" "${HELM_VERSION}")
if [[ "${1:-}" == --print-path ]]; then
  echo "${HELM}"
  exit 0
fi

# helm keeps its own config and cache; nothing of the user's is read or written.
export HELM_CONFIG_HOME=${TMPDIR:-/tmp}/effectivepolicy-helm/config HELM_CACHE_HOME=${TMPDIR:-/tmp}/effectivepolicy-helm/cache \
  HELM_DATA_HOME=${TMPDIR:-/tmp}/effectivepolicy-helm/data
echo "helm: $("${HELM}" version --short) lint ${CHART}"
"${HELM}" lint --strict "${CHART}"
for values in "" "--set certs.mode=certManager" "--set certs.mode=existingSecret --set certs.existingSecret=ep-serving --set certs.caBundle=Zm9v" \
  "--set podDisruptionBudget.enabled=false --set replicas=1" "--set cache.existingClaim=ep-cache" \
  "--set monitoring.prometheusRule.enabled=true --set monitoring.dashboard.enabled=true"; do
  # shellcheck disable=SC2086
  "${HELM}" lint --strict "${CHART}" ${values} >/dev/null
  # shellcheck disable=SC2086
  "${HELM}" template effectivepolicy "${CHART}" --namespace effectivepolicy-system ${values} >/dev/null
  echo "helm: template ${values:-(defaults)}: ok"
done
# Bad values fail with a message saying what is wrong.
for bad in "certs.mode=bogus|certs.mode must be" "certs.mode=existingSecret,certs.existingSecret=x|certs.caBundle" \
  "certs.mode=existingSecret,certs.caBundle=Zm9v|certs.existingSecret is required"; do
  set_args=${bad%%|*} want=${bad#*|}
  if out=$("${HELM}" template effectivepolicy "${CHART}" --set "${set_args}" 2>&1); then
    echo "helm: template --set ${set_args} rendered; want an error" >&2
    exit 1
  fi
  grep -qF -- "${want}" <<<"${out}" || { echo "helm: --set ${set_args}: want '${want}' in: ${out}" >&2; exit 1; }
  echo "helm: template --set ${set_args}: refused, as it should"
done
echo "helm: ok"
