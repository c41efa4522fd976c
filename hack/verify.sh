#!/usr/bin/env bash
# Fails when generated code is stale, gofmt would change a file, go vet complains,
# golangci-lint (hack/lint.sh, .golangci.yml) finds anything, or the Helm chart does not lint
# and render (hack/helm.sh), or the page built from web/ differs from the committed one.
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
hack/verify-codegen.sh
hack/verify-scenarios.sh
hack/lib/fuzzoutcome_test.sh
# The committed page (pkg/cli/ui/assets) is what web/ builds (npm ci on a fresh machine).
UI_CHECK=1 hack/build-ui.sh
unformatted=$(gofmt -l $(git ls-files '*.go') 2>/dev/null || true)
if [[ -n "${unformatted}" ]]; then
  echo "gofmt needed on:"; echo "${unformatted}"; exit 1
fi
go vet ./...
hack/lint.sh
hack/helm.sh
echo "verify: ok"
