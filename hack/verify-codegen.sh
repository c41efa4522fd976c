#!/usr/bin/env bash
# Regenerates code into a scratch copy of the tree and fails if it differs
# from what is committed.
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "${TMP}"' EXIT
cd "${ROOT}"
# Copy the tracked and untracked-but-not-ignored files, then regenerate there.
git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "${TMP}" 2>/dev/null || true
cp -r .git "${TMP}/.git" 2>/dev/null || true
(cd "${TMP}" && hack/update-codegen.sh >/dev/null)
if ! diff -Nru "${ROOT}/pkg/generated" "${TMP}/pkg/generated" >"${TMP}.diff" ||
   ! diff -Nru "${ROOT}/pkg/apis" "${TMP}/pkg/apis" >>"${TMP}.diff" ||
   ! diff -Nu "${ROOT}/hack/api-rules-violations.list" "${TMP}/hack/api-rules-violations.list" >>"${TMP}.diff"; then
  cat "${TMP}.diff"; rm -f "${TMP}.diff"
  echo "generated code is out of date: run hack/update-codegen.sh"; exit 1
fi
rm -f "${TMP}.diff"
echo "verify-codegen: generated code is current"
