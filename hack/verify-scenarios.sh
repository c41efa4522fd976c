#!/usr/bin/env bash
# test/scenarios is a verbatim copy of ../shared/scenarios (the product
# contract's worked examples), so tests run from a clone alone. When the shared
# folder is beside the clone, fail if the copy has drifted from it.
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED="${ROOT}/../shared/scenarios"
if [[ ! -d "${SHARED}" ]]; then
  echo "verify-scenarios: ${SHARED} not present; using the committed copy"
  exit 0
fi
if ! diff -ru "${SHARED}" "${ROOT}/test/scenarios"; then
  echo "verify-scenarios: test/scenarios differs from ../shared/scenarios: copy it again (cp -r ../shared/scenarios/. test/scenarios/)"
  exit 1
fi
echo "verify-scenarios: test/scenarios matches ../shared/scenarios"
