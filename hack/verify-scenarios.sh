#!/usr/bin/env bash
# test/scenarios and test/scenarios-impl are verbatim copies of ../shared/scenarios and
# ../shared/scenarios-impl (the product contract's worked examples, generic and of real
# implementations), so tests run from a clone alone. When the shared folder is beside the clone,
# fail if a copy has drifted from it.
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
status=0
for name in scenarios scenarios-impl; do
  shared="${ROOT}/../shared/${name}"
  if [[ ! -d "${shared}" ]]; then
    echo "verify-scenarios: ${shared} not present; using the committed copy test/${name}"
    continue
  fi
  if ! diff -ru "${shared}" "${ROOT}/test/${name}"; then
    echo "verify-scenarios: test/${name} differs from ../shared/${name}: copy it again (rm -rf test/${name} && cp -r ../shared/${name} test/${name})"
    status=1
    continue
  fi
  echo "verify-scenarios: test/${name} matches ../shared/${name}"
done
exit $status
