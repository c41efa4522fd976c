// Package procfs reads what the end-to-end benchmark needs of the kernel's
// /proc: a process's start time, CPU time, memory and threads, and the
// machine's load average and description, so that every number is taken
// from the processes themselves rather than estimated.
package procfs

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// clockTick is USER_HZ, 100 on every Linux architecture Go supports.
const clockTick = 100

// ProcessStart is /proc/<pid>/stat field 22 (starttime, ticks since boot) plus
// btime from /proc/stat.
func ProcessStart(pid int) (time.Time, error) {
	f, err := StatFields(pid)
	if err != nil {
		return time.Time{}, err
	}
	ticks, err := strconv.ParseInt(f[21], 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, err
	}
	for _, l := range strings.Split(string(stat), "\n") {
		if v, ok := strings.CutPrefix(l, "btime "); ok {
			bt, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, err
			}
			return time.Unix(bt, 0).Add(time.Duration(ticks) * time.Second / clockTick), nil
		}
	}
	return time.Time{}, fmt.Errorf("no btime in /proc/stat")
}

// StatFields splits /proc/<pid>/stat into its fields (fields[0] is the
// pid; the command name, in parentheses, may contain spaces).
func StatFields(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	return append([]string{"pid", "comm"}, strings.Fields(s[i+1:])...), nil
}

// CPUSeconds is the user + system CPU time of a process.
func CPUSeconds(pid int) (float64, error) {
	f, err := StatFields(pid)
	if err != nil {
		return 0, err
	}
	u, err1 := strconv.ParseFloat(f[13], 64)
	s, err2 := strconv.ParseFloat(f[14], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	return (u + s) / clockTick, nil
}

// StatusKB returns the kB fields of /proc/<pid>/status (VmHWM, VmRSS, ...).
func StatusKB(pid int) (map[string]int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fs := strings.Fields(v)
		if len(fs) == 2 && fs[1] == "kB" {
			if n, err := strconv.ParseInt(fs[0], 10, 64); err == nil {
				out[k] = n
			}
		}
	}
	return out, sc.Err()
}

// LoadAvg is the machine's 1, 5 and 15-minute load averages.
func LoadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}

// DescribeMachine adds the CPU, cores, memory, kernel and Go version to m,
// keeping what m already says.
func DescribeMachine(m map[string]string) {
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

// WaitQuiet waits until every process of pids (0s are skipped) used less
// than maxCores of CPU over window, and returns how long that took; after
// timeout it gives up waiting and measures anyway.
func WaitQuiet(pids []int, maxCores float64, window, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	cpu := func() []float64 {
		out := make([]float64, len(pids))
		for i, pid := range pids {
			if pid > 0 {
				out[i], _ = CPUSeconds(pid)
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
