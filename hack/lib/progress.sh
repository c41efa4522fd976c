#!/usr/bin/env bash
# Progress for long first-time Go builds (sourced). `go build -v` names each package as it
# compiles it; counting those lines against `go list -deps` gives a rough fraction done and,
# extrapolated from the time so far, roughly how long is left. Packages already in the build
# cache are never named, so on a partly warm cache the estimate is pessimistic, never optimistic.

# progress::count TOTAL LABEL: reads `go build -v` output on stdin, prints a line on stderr every
# PROGRESS_EVERY seconds (default 30), and passes every line that is not a package path through
# (compiler errors).
progress::count() {
  local total=$1 label=$2 every=${PROGRESS_EVERY:-30}
  local n=0 start=$SECONDS last=$SECONDS line elapsed left
  while IFS= read -r line; do
    if [[ $line =~ ^[A-Za-z0-9._~/+-]+$ ]]; then
      n=$((n + 1))
    else
      printf '%s\n' "$line" >&2
    fi
    if (( SECONDS - last >= every && n > 0 )); then
      last=$SECONDS
      elapsed=$((SECONDS - start))
      left=$(( elapsed * (total > n ? total - n : 0) / n ))
      printf '%s: compiled %d of ~%d packages (%d%%) in %dm%02ds, roughly %dm%02ds left\n' \
        "$label" "$n" "$total" $((100 * n / total)) $((elapsed / 60)) $((elapsed % 60)) \
        $((left / 60)) $((left % 60)) >&2
    fi
  done
  printf '%s: compiled %d packages in %ds (the rest came from the build cache); linking done\n' \
    "$label" "$n" $((SECONDS - start)) >&2
}
