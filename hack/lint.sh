#!/usr/bin/env bash
# Runs golangci-lint with the checked-in .golangci.yml over the product module and the nested
# ones (`make lint`, and `make verify` through hack/verify.sh). Extra arguments go to `golangci-lint run`, e.g.
#   hack/lint.sh --fix            hack/lint.sh ./pkg/apiserver/...
#
# golangci-lint is built from the Go module proxy at the pinned GOLANGCI_LINT_VERSION and cached
# (hack/lib/gotool.sh: with this module's Go, outside this module). A cold build takes several
# minutes on 2 cores; afterwards the cached binary is used at once.
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"

GOLANGCI_LINT_VERSION=${GOLANGCI_LINT_VERSION:-v2.15.0}
# shellcheck source=lib/gotool.sh
source "${ROOT}/hack/lib/gotool.sh"
LINT=$(gotool::path golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint "${GOLANGCI_LINT_VERSION}")

# Linting type-checks every package and its dependencies: the first run on a machine also
# downloads the module's dependencies and fills golangci-lint's cache (about a minute), later
# runs only look at what changed.
# golangci-lint takes a machine-wide lock on start and, by default, exits with "parallel
# golangci-lint is running" when another run holds it: two checkouts verified at once (or a lint
# beside `make test`) failed. --allow-serial-runners waits for the lock instead.
LINT_RUN=("${LINT}" run --allow-serial-runners --config "${ROOT}/.golangci.yml")
echo "lint: $("${LINT}" version --short 2>/dev/null || echo "${GOLANGCI_LINT_VERSION}") over ./..."
"${LINT_RUN[@]}" "$@"
# The image assembler and the differential harness with its oracles are modules of their own:
# ./... above does not reach them. The harness is linted with the tags of its long test and of
# the Istio oracle, so that every file of it is looked at.
if [[ $# -eq 0 ]]; then
  for m in hack/image test/differential test/differential/oracles/istio test/differential/oracles/kgateway \
    test/differential/oracles/kuadrant; do
    echo "lint: ${m}"
    (cd "${m}" && GOWORK=off GOFLAGS= "${LINT_RUN[@]}" --build-tags long,istio ./...)
  done
fi
echo "lint: ok"
