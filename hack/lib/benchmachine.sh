#!/usr/bin/env bash
# The machine a benchmark ran on, as the report tools' -machine flags (sourced by the bench
# scripts, whose reports describe the machine and its load the same way).

# bench::machine_flags START LOAD_BEFORE: sets BENCH_MACHINE_FLAGS to the -machine flags for
# the date, commit, cores, CPU, memory, Go, the load average before (LOAD_BEFORE, read at the
# start) and now, and the script's wall time since START (epoch seconds). Needs GO.
bench::machine_flags() {
  local start=$1 load_before=$2 mem_total model
  mem_total=$(awk '/^MemTotal:/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)
  model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
  BENCH_MACHINE_FLAGS=(
    -machine "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    -machine "commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    -machine "nproc=$(nproc)"
    -machine "CPU=${model}"
    -machine "memory=${mem_total}"
    -machine "Go=$("${GO}" version | cut -d' ' -f3-)"
    -machine "load average before (1/5/15 min)=${load_before}"
    -machine "load average after=$(cut -d' ' -f1-3 /proc/loadavg)"
    -machine "wall time of the script=$(($(date -u +%s) - start)) s"
  )
}
