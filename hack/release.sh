#!/usr/bin/env bash
# `make release`: static binaries (CGO off, -trimpath, stamped by hack/ldflags.sh) of every main
# package under cmd/ for each of RELEASE_PLATFORMS (default linux and darwin, amd64 and arm64),
# named NAME-VERSION-OS-ARCH in dist/; the kubectl plugin also as the krew archives
# kubectl-effectivepolicy-VERSION-OS-ARCH.tar.gz (the binary as kubectl-effectivepolicy, and
# LICENSE) and dist/effectivepolicy.yaml, the krew manifest of plugins/krew/ with this release's
# version, archive addresses and checksums; dist/SHA256SUMS covers everything.
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
GO=${GO:-go}
platforms=${RELEASE_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
ldflags=$(hack/ldflags.sh)
version=$(sed -n 's/.*version\.version=\([^ ]*\).*/\1/p' <<<"$ldflags")
version=${version:-dev}
mapfile -t cmds < <("${GO}" list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./cmd/... | sed '/^$/d')
rm -rf dist && mkdir -p dist
for platform in ${platforms}; do
  os=${platform%/*} arch=${platform#*/}
  for cmd in "${cmds[@]}"; do
    name=$(basename "${cmd}")
    out="dist/${name}-${version}-${os}-${arch}"
    echo "release: ${out}"
    CGO_ENABLED=0 GOOS=${os} GOARCH=${arch} "${GO}" build -trimpath -ldflags "${ldflags}" -o "${out}" "${cmd}"
  done
done
# The plugin's krew archives and manifest.
# shellcheck disable=SC2086 # one platform per word
hack/krew-package.sh dist "${version}" ${platforms}
(cd dist && sha256sum -- * >SHA256SUMS)
echo "release: $(($(wc -l <dist/SHA256SUMS))) files in dist/ (binaries, krew archives, the krew manifest dist/effectivepolicy.yaml), checksums in dist/SHA256SUMS"
