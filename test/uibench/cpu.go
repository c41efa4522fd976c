package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ticksPerSecond is Linux's USER_HZ, the unit of /proc/PID/stat's times.
const ticksPerSecond = 100

// treeCPU is the CPU time (user and system) of root and every process
// below it: Chromium's browser, renderers, GPU and network processes. On a
// shared machine the wall times wait for a core; this does not.
func treeCPU(root int) time.Duration {
	parent := map[int]int{}
	cpu := map[int]int64{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		// After the command: state, ppid, ...; utime and stime are the 12th and 13th.
		f := strings.Fields(s[i+1:])
		if len(f) < 13 {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		ppid, _ := strconv.Atoi(f[1])
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		parent[pid], cpu[pid] = ppid, ut+st
	}
	var ticks int64
	for pid, c := range cpu {
		for p := pid; p > 1; p = parent[p] {
			if p == root {
				ticks += c
				break
			}
		}
	}
	return time.Duration(ticks) * time.Second / ticksPerSecond
}
