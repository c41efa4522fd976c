#!/usr/bin/env bash
# hack/krew-package.sh DIST VERSION OS/ARCH...: the krew archives of the kubectl plugin,
# DIST/kubectl-effectivepolicy-VERSION-OS-ARCH.tar.gz (the binary
# DIST/kubectl-effectivepolicy-VERSION-OS-ARCH as kubectl-effectivepolicy, and LICENSE), and
# DIST/effectivepolicy.yaml, the manifest of plugins/krew/ for this release. hack/release.sh runs
# it after building; cmd/kubectl-effectivepolicy's TestKrewPackage runs it on stand-in binaries.
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dist=$(cd "$1" && pwd)
version=$2
shift 2
platforms=$*
cd "${ROOT}"
# krew installs from an archive per platform. Reproducible: entries sorted, times, owners and the
# gzip header fixed, so the same binary gives the same checksum.
plugin=kubectl-effectivepolicy
for platform in ${platforms}; do
  os=${platform%/*} arch=${platform#*/}
  stage=$(mktemp -d)
  cp "${dist}/${plugin}-${version}-${os}-${arch}" "${stage}/${plugin}"
  cp LICENSE "${stage}/LICENSE"
  tar -C "${stage}" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - "${plugin}" LICENSE |
    gzip -9n >"${dist}/${plugin}-${version}-${os}-${arch}.tar.gz"
  rm -rf "${stage}"
done
# The manifest: plugins/krew/effectivepolicy.yaml without its comment, the placeholder version
# replaced by this one, each platform's sha256 set to its archive's (the line follows the
# platform's uri), and the platforms this release did not build (RELEASE_PLATFORMS) left out.
(cd "${dist}" && sha256sum -- "${plugin}"-*.tar.gz) >"${dist}/archives.sha256"
awk -v version="${version}" '
  function flush() {
    if (block == "") return
    if (archive in sum) { printf "%s", block; kept++ } else { print "krew-package: no archive " archive ", platform left out of the manifest" > "/dev/stderr" }
    block = ""
  }
  FNR == NR { sum[$2] = $1; next }
  /^#/ { next }
  { gsub(/v0\.0\.0-dev/, version) }
  /^  - selector:/ { flush(); inblock = 1 }
  !inblock { print; next }
  /^ *uri: / { n = split($2, parts, "/"); archive = parts[n] }
  # (Testing with "in" first: reading sum[archive] would create the entry.)
  /^ *sha256: / && (archive in sum) { sub(/"[0-9a-f]*"/, "\"" sum[archive] "\"") }
  { block = block $0 "\n" }
  END { flush(); if (!kept) { print "krew-package: no platform built" > "/dev/stderr"; exit 1 } }
' "${dist}/archives.sha256" plugins/krew/effectivepolicy.yaml >"${dist}/effectivepolicy.yaml"
rm "${dist}/archives.sha256"
