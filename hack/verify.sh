#!/usr/bin/env bash
# Fails when generated code is stale, gofmt would change a file, go vet complains,
# golangci-lint (hack/lint.sh, .golangci.yml) finds anything, or the Helm chart does not lint
# and render (hack/helm.sh).
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
hack/verify-codegen.sh
hack/verify-scenarios.sh
unformatted=$(gofmt -l $(git ls-files '*.go') 2>/dev/null || true)
if [[ -n "${unformatted}" ]]; then
  echo "gofmt needed on:"; echo "${unformatted}"; exit 1
fi
go vet ./...
hack/lint.sh
hack/helm.sh
echo "verify: ok"
