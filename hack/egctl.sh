#!/usr/bin/env bash
# Prints the path of Envoy Gateway's egctl at the version the differential harness
# (test/differential) judges with, building it once from the Go module proxy into the tool cache
# (hack/lib/gotool.sh, as golangci-lint): several minutes on 2 cores the first time.
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EGCTL_VERSION=${EGCTL_VERSION:-v1.9.0}
# shellcheck source=lib/gotool.sh
source "${ROOT}/hack/lib/gotool.sh"
gotool::path egctl github.com/envoyproxy/gateway/cmd/egctl "${EGCTL_VERSION}"
