#!/usr/bin/env bash
# Runs golangci-lint with the checked-in .golangci.yml over the product module (`make lint`, and
# `make verify` through hack/verify.sh). Extra arguments go to `golangci-lint run`, e.g.
#   hack/lint.sh --fix            hack/lint.sh ./pkg/apiserver/...
#
# golangci-lint is built from the Go module proxy at the pinned GOLANGCI_LINT_VERSION with the
# Go toolchain that builds this module (a linter built by an older Go refuses newer code), and
# cached under ${XDG_CACHE_HOME:-$HOME/.cache}/effectivepolicy/tools/ keyed by both versions.
# The build runs outside this module, so go.mod and go.sum are never touched. A cold build takes
# several minutes on 2 cores; afterwards the cached binary is used at once.
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"

GOLANGCI_LINT_VERSION=${GOLANGCI_LINT_VERSION:-v2.15.0}
GO=${GO:-go}
# The toolchain this module selects (go.mod's go line may make `go` switch toolchains).
GOROOT_MODULE=$("${GO}" env GOROOT)
GO_MODULE="${GOROOT_MODULE}/bin/go"
GO_VERSION=$("${GO_MODULE}" env GOVERSION)
TOOLS_DIR=${XDG_CACHE_HOME:-${HOME}/.cache}/effectivepolicy/tools
BIN_DIR="${TOOLS_DIR}/golangci-lint-${GOLANGCI_LINT_VERSION}-${GO_VERSION}"
LINT="${BIN_DIR}/golangci-lint"

if [[ ! -x "${LINT}" ]]; then
  echo "lint: building golangci-lint ${GOLANGCI_LINT_VERSION} with ${GO_VERSION} from the Go module proxy"
  echo "lint: into ${BIN_DIR}"
  echo "lint: a cold build downloads and compiles ~300 packages: several minutes on 2 cores (once)"
  t0=${SECONDS}
  tmp=$(mktemp -d)
  trap 'rm -rf "${tmp}"' EXIT
  # Outside this module (cd to an empty dir, no go.work): `go install pkg@version` resolves the
  # linter's own go.mod and leaves ours alone. GOTOOLCHAIN=local builds with exactly this Go.
  (cd "${tmp}" && GOWORK=off GOFLAGS= GOTOOLCHAIN=local GOBIN="${tmp}/bin" \
    "${GO_MODULE}" install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@${GOLANGCI_LINT_VERSION}")
  mkdir -p "${BIN_DIR}"
  mv "${tmp}/bin/golangci-lint" "${LINT}.partial"
  mv "${LINT}.partial" "${LINT}"
  echo "lint: built golangci-lint in $((SECONDS - t0))s"
fi

# Linting type-checks every package and its dependencies: the first run on a machine also
# downloads the module's dependencies and fills golangci-lint's cache (about a minute), later
# runs only look at what changed.
echo "lint: $("${LINT}" version --short 2>/dev/null || echo "${GOLANGCI_LINT_VERSION}") over ./..."
"${LINT}" run --config "${ROOT}/.golangci.yml" "$@"
# The image assembler is a module of its own (hack/image/go.mod): ./... above does not reach it.
if [[ $# -eq 0 ]]; then
  echo "lint: hack/image"
  (cd hack/image && GOFLAGS=-mod=mod "${LINT}" run --config "${ROOT}/.golangci.yml" ./...)
fi
echo "lint: ok"
