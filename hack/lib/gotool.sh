#!/usr/bin/env bash
# Developer tools built from the Go module proxy (sourced by hack/lint.sh and hack/helm.sh).
#
# gotool::path NAME PACKAGE VERSION prints the path of NAME, built from PACKAGE@VERSION with the
# Go toolchain that builds this module (a tool built by an older Go may refuse newer code), after
# building it once into ${XDG_CACHE_HOME:-$HOME/.cache}/effectivepolicy/tools/NAME-VERSION-GOVERSION/.
# The build runs outside this module (an empty directory, no go.work), so `go install pkg@version`
# resolves the tool's own go.mod and never touches ours; GOTOOLCHAIN=local builds with exactly
# this Go. Progress goes to stderr, the path alone to stdout.
gotool::path() {
  local name=$1 pkg=$2 version=$3
  local go_module go_version bin_dir tool tmp t0
  go_module="$("${GO:-go}" env GOROOT)/bin/go"
  go_version=$("${go_module}" env GOVERSION)
  bin_dir=${XDG_CACHE_HOME:-${HOME}/.cache}/effectivepolicy/tools/${name}-${version}-${go_version}
  tool="${bin_dir}/${name}"
  if [[ ! -x "${tool}" ]]; then
    echo "${name}: building ${pkg}@${version} with ${go_version} from the Go module proxy into ${bin_dir}" >&2
    echo "${name}: a cold build downloads and compiles hundreds of packages: minutes on 2 cores (once)" >&2
    t0=${SECONDS}
    tmp=$(mktemp -d)
    if ! (cd "${tmp}" && GOWORK=off GOFLAGS= GOTOOLCHAIN=local GOBIN="${tmp}/bin" \
      "${go_module}" install "${pkg}@${version}") >&2; then
      rm -rf "${tmp}"
      return 1
    fi
    mkdir -p "${bin_dir}"
    mv "${tmp}/bin/${name}" "${tool}.partial"
    mv "${tool}.partial" "${tool}"
    rm -rf "${tmp}"
    echo "${name}: built in $((SECONDS - t0))s" >&2
  fi
  echo "${tool}"
}
