#!/usr/bin/env bash
# Installs the headless browser of the page's tests (docs/ui.md): Debian's chromium, once. Prints
# its path. CHROMIUM names another binary to use instead.
set -o errexit -o nounset -o pipefail
if [[ -n "${CHROMIUM:-}" ]]; then
  echo "$CHROMIUM"; exit 0
fi
if ! command -v chromium >/dev/null; then
  echo "chromium: installing Debian's chromium (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq chromium >&2
fi
command -v chromium
