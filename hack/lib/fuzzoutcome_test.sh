#!/usr/bin/env bash
# Checks fuzzoutcome::classify on logs of each kind of failed fuzzing run (run by hack/verify.sh).
set -o errexit -o nounset -o pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "${HERE}/fuzzoutcome.sh"
failed=0
while read -r file want; do
  got=$(fuzzoutcome::classify "${HERE}/testdata/fuzzoutcome/${file}")
  if [[ "$got" != "$want" ]]; then
    echo "fuzzoutcome: ${file}: got ${got}, want ${want}"; failed=1
  fi
done <<'CASES'
deadline-race.log deadline-race
finding-written.log finding
panic.log finding
deadline-and-error.log finding
hung.log finding
CASES
exit "$failed"
