package main

// The machine and the server process: load averages, CPU, memory and threads,
// read from /proc.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

func serverResourcesOf(pid int, local string) (serverResources, error) {
	var r serverResources
	st, err := procStatusKB(pid)
	if err != nil {
		return r, fmt.Errorf("server process %d: %w", pid, err)
	}
	r.PeakRSSBytes, r.EndRSSBytes = st["VmHWM"]<<10, st["VmRSS"]<<10
	r.EndRSSAnonBytes, r.EndRSSFileBytes = st["RssAnon"]<<10, st["RssFile"]<<10
	if r.CPUSeconds, err = procCPUSeconds(pid); err != nil {
		return r, err
	}
	if f, err := procStatFields(pid); err == nil {
		if _, err := fmt.Sscan(f[19], &r.Threads); err != nil {
			return r, fmt.Errorf("threads of process %d: %w", pid, err)
		}
	}
	if started, err := processStart(pid); err == nil {
		r.ProcessUptime = time.Since(started).Seconds()
	}
	r.BboltFile = filepath.Join(local, "cache", "effectivepolicy.db")
	fi, err := os.Stat(r.BboltFile)
	r.BboltFile = "<cache-dir>/effectivepolicy.db"
	if err != nil {
		return r, err
	}
	r.BboltBytes = fi.Size()
	return r, nil
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}

func describeMachine(m map[string]string) {
	set := func(k, v string) {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				set("CPU", strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":")))
				break
			}
		}
	}
	set("cores", fmt.Sprint(runtime.NumCPU()))
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				var kb float64
				if _, err := fmt.Sscan(v, &kb); err == nil {
					set("memory", fmt.Sprintf("%.1f GiB", kb/(1<<20)))
				}
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		set("kernel", strings.TrimSpace(string(data)))
	}
	set("Go", runtime.Version())
}

// pidFromFile reads a pid file (0 when it cannot).
func pidFromFile(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// waitQuiet waits until every process of pids (0s are skipped) used less
// than maxCores of CPU over window, and returns how long that took; after
// timeout it gives up waiting and measures anyway.
func waitQuiet(pids []int, maxCores float64, window, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	cpu := func() []float64 {
		out := make([]float64, len(pids))
		for i, pid := range pids {
			if pid > 0 {
				out[i], _ = procCPUSeconds(pid)
			}
		}
		return out
	}
	for {
		before := cpu()
		time.Sleep(window)
		after := cpu()
		quiet := true
		for i := range pids {
			if (after[i]-before[i])/window.Seconds() >= maxCores {
				quiet = false
			}
		}
		if quiet || time.Since(start) > timeout {
			return time.Since(start), nil
		}
	}
}
