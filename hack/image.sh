#!/usr/bin/env bash
# `make image`: the server's container image, built here without a container engine and without
# any image registry (FROM scratch, as the Dockerfile's distroless stage but assembled in Go by
# hack/image with go-containerregistry): a static linux binary (CGO off, -trimpath, stamped by
# hack/ldflags.sh) as the entrypoint, run as the non-root user 65532. Writes a docker-archive
# tarball, bin/effectivepolicy-apiserver-image.tar, tagged effectivepolicy-apiserver:latest
# (the tag artifacts/ deploys) and :<version>; load it with `docker load -i` or `podman load -i`
# (or `kind load image-archive`). The image's creation time is the commit's date, so one commit
# gives one image digest.
#
#   hack/image.sh                 build the image (IMAGE_ARCH, default this machine's GOARCH)
#   hack/image.sh extract DIR     unpack the image's filesystem into DIR, print its config (JSON)
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
GO=${GO:-go}
ARCH=${IMAGE_ARCH:-$("${GO}" env GOARCH)}
OUT=bin/effectivepolicy-apiserver-image.tar
TOOL=bin/image-tool

# The assembler is a module of its own (hack/image/go.mod): the first build downloads
# go-containerregistry through the Go module proxy (a few seconds).
build_tool() {
  [[ -x "${TOOL}" && -z "$(find hack/image -newer "${TOOL}" -type f | head -n 1)" ]] && return
  echo "image: building the image assembler (hack/image, go-containerregistry)"
  (cd hack/image && GOWORK=off GOFLAGS= "${GO}" build -o "${ROOT}/${TOOL}" .)
}

if [[ "${1:-}" == extract ]]; then
  [[ -n "${2:-}" ]] || { echo "usage: hack/image.sh extract DIR" >&2; exit 2; }
  build_tool >&2
  [[ -f "${OUT}" ]] || { echo "image: ${OUT} not found: run 'make image' first" >&2; exit 1; }
  exec "${TOOL}" extract -i "${OUT}" -o "$2"
fi

build_tool
ldflags=$(hack/ldflags.sh)
version=$(sed -n 's/.*version\.version=\([^ ]*\).*/\1/p' <<<"${ldflags}")
version=${version:-dev}
created=1970-01-01T00:00:00Z
git rev-parse --git-dir >/dev/null 2>&1 &&
  created=$(TZ=UTC git show -s --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD)
mkdir -p bin/image
echo "image: building effectivepolicy-apiserver ${version} for linux/${ARCH} (static)"
CGO_ENABLED=0 GOOS=linux GOARCH="${ARCH}" "${GO}" build -trimpath -ldflags "${ldflags}" \
  -o "bin/image/effectivepolicy-apiserver-linux-${ARCH}" ./cmd/effectivepolicy-apiserver
# A "+" (a dirty or dev version) is no valid tag character.
tag=${version//+/-}
"${TOOL}" build -binary "bin/image/effectivepolicy-apiserver-linux-${ARCH}" -o "${OUT}" -arch "${ARCH}" \
  -version "${version}" -created "${created}" \
  -tag effectivepolicy-apiserver:latest -tag "effectivepolicy-apiserver:${tag}"
