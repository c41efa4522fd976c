package localup

// What the server logged: its start-up, and what it restored after a restart.

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ServerLog holds what the server logged about its start-up
// (pkg/live: "Input informers synced", "First computation done; ready").
type ServerLog struct {
	InformersSyncedSeconds float64 `json:"informersSyncedSeconds"`
	ReadySeconds           float64 `json:"readySeconds"`
	EffectivePolicies      int     `json:"effectivePolicies"`
	ClusterEffective       int     `json:"clusterEffectivePolicies"`
}

var (
	reSynced = regexp.MustCompile(`"Input informers synced" duration="?([^" ]+)"?`)
	reReady  = regexp.MustCompile(`"First computation done; ready" duration="?([^" ]+)"?.*effectivepolicies=(\d+) clustereffectivepolicies=(\d+)`)
)

// ParseServerLog reads the last start-up of the log (local-up appends).
func ParseServerLog(path string) (ServerLog, error) {
	var out ServerLog
	data, err := os.ReadFile(path)
	if err != nil {
		return out, err
	}
	var haveSynced, haveReady bool
	for _, l := range strings.Split(string(data), "\n") {
		if m := reSynced.FindStringSubmatch(l); m != nil {
			if d, err := time.ParseDuration(m[1]); err == nil {
				out.InformersSyncedSeconds, haveSynced = d.Seconds(), true
			}
		}
		if m := reReady.FindStringSubmatch(l); m != nil {
			if d, err := time.ParseDuration(m[1]); err == nil {
				out.ReadySeconds, haveReady = d.Seconds(), true
			}
			out.EffectivePolicies, _ = strconv.Atoi(m[2])
			out.ClusterEffective, _ = strconv.Atoi(m[3])
		}
	}
	if !haveSynced || !haveReady {
		return out, fmt.Errorf("%s: no \"Input informers synced\" / \"First computation done; ready\" lines", path)
	}
	return out, nil
}

// FileSize is the size of path, 0 if it cannot be read.
func FileSize(path string) int64 {
	if st, err := os.Stat(path); err == nil {
		return st.Size()
	}
	return 0
}

// RestoredLines are the "Restored outputs from cache" lines of path after offset.
func RestoredLines(path string, offset int64) []string {
	data, err := os.ReadFile(path)
	if err != nil || int64(len(data)) < offset {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(data[offset:]), "\n") {
		if strings.Contains(l, "Restored outputs from cache") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}
