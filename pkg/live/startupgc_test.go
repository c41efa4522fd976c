package live

import (
	"runtime/debug"
	"testing"
)

// TestStartupGC: start-up runs with a lower GC target unless the operator
// set GOGC, and ending it restores the previous target.
func TestStartupGC(t *testing.T) {
	for _, tc := range []struct {
		name, gogc  string
		wantStartup int
	}{
		{"default", "", startupGCPercent},
		{"GOGC set by the operator", "150", 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			prev := debug.SetGCPercent(100)
			defer debug.SetGCPercent(prev)
			end := startupGC()
			if got := gcPercent(); got != tc.wantStartup {
				t.Errorf("during start-up the GC target is %d, want %d", got, tc.wantStartup)
			}
			end()
			end() // idempotent
			if got := gcPercent(); got != 100 {
				t.Errorf("after start-up the GC target is %d, want 100", got)
			}
		})
	}
}

// gcPercent reads the GC target (SetGCPercent is the only way to read it).
func gcPercent() int {
	v := debug.SetGCPercent(-1)
	debug.SetGCPercent(v)
	return v
}
