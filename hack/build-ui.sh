#!/usr/bin/env bash
# Builds the page of `kubectl effectivepolicy ui` and of --html files from web/ into
# pkg/cli/ui/assets, which the plugin embeds (docs/ui.md). The front-end packages come from
# the npm registry as package-lock.json pins them (npm ci), installed again only when the lock
# file changed. The built files are committed, so `go build`, `go vet` and the linters work
# without Node.js; hack/verify.sh runs this script and fails when they differ from web/.
#
# A build records the hash of web/'s sources in pkg/cli/ui/assets/.source-hash; while they
# hash the same, the script does nothing (and needs no npm), so `make build` costs nothing.
#
# Environment: UI_CHECK=1 builds into a temporary folder and fails when it differs from the
# committed assets instead of replacing them.
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WEB="$ROOT/web"
ASSETS="$ROOT/pkg/cli/ui/assets"
# sourceHash hashes web/'s files but the installed packages.
sourceHash() {
  (cd "$WEB" && find . -path ./node_modules -prune -o -type f -print | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -d' ' -f1
}
hash=$(sourceHash)
if [[ "${UI_CHECK:-}" != 1 && -f "$ASSETS/.source-hash" && "$(cat "$ASSETS/.source-hash")" == "$hash" ]]; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "build-ui: npm not found: install Node.js 20 or newer with npm (Debian: apt-get install -y nodejs npm)" >&2
  exit 1
fi
cd "$WEB"
# npm ci records the lock it installed in node_modules/.package-lock.json.
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
if [[ "${UI_CHECK:-}" == 1 ]]; then
  out=$(mktemp -d "${TMPDIR:-/tmp}/ui-assets.XXXXXX")
  trap 'rm -rf "$out"' EXIT
  npx --no-install vite build --logLevel error --outDir "$out" --emptyOutDir
  if ! diff -r -x .source-hash "$out" "$ASSETS" >/dev/null || [[ "$(cat "$ASSETS/.source-hash" 2>/dev/null)" != "$hash" ]]; then
    echo "build-ui: pkg/cli/ui/assets is not what web/ builds: run hack/build-ui.sh and commit" >&2
    diff -rq -x .source-hash "$out" "$ASSETS" >&2 || true
    exit 1
  fi
  exit 0
fi
npx --no-install vite build --logLevel error
echo "$hash" >"$ASSETS/.source-hash"
