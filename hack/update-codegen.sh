#!/usr/bin/env bash
# Regenerates deepcopy, OpenAPI, clientset, listers and informers with
# k8s.io/code-generator's kube_codegen.sh at the version go.mod requires.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
MODULE=$(go list -m)
# `go list -m -f {{.Dir}}` prints nothing for a module that is not in the module cache yet (a
# fresh machine): download it first (a no-op once it is cached).
go mod download k8s.io/code-generator
CODEGEN_PKG=$(go list -m -f '{{.Dir}}' k8s.io/code-generator)
if [[ -z "${CODEGEN_PKG}" || ! -f "${CODEGEN_PKG}/kube_codegen.sh" ]]; then
  echo "update-codegen: k8s.io/code-generator is not in the module cache after go mod download" >&2
  exit 1
fi
# shellcheck source=/dev/null
source "${CODEGEN_PKG}/kube_codegen.sh"

kube::codegen::gen_helpers \
    --boilerplate "${ROOT}/hack/boilerplate.go.txt" \
    "${ROOT}/pkg/apis"

kube::codegen::gen_openapi \
    --output-dir "${ROOT}/pkg/generated/openapi" \
    --output-pkg "${MODULE}/pkg/generated/openapi" \
    --output-model-name-file zz_generated.model_name.go \
    --report-filename "${ROOT}/hack/api-rules-violations.list" \
    --update-report \
    --boilerplate "${ROOT}/hack/boilerplate.go.txt" \
    "${ROOT}/pkg/apis"

kube::codegen::gen_client \
    --with-watch \
    --output-dir "${ROOT}/pkg/generated" \
    --output-pkg "${MODULE}/pkg/generated" \
    --boilerplate "${ROOT}/hack/boilerplate.go.txt" \
    "${ROOT}/pkg/apis"
