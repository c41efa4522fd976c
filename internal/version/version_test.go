package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestGet(t *testing.T) {
	vcs := func(settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{Settings: settings}, true }
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "abc123"}
	at := debug.BuildSetting{Key: "vcs.time", Value: "2026-11-23T10:00:00Z"}
	dirty := debug.BuildSetting{Key: "vcs.modified", Value: "true"}
	for _, tc := range []struct {
		name                  string
		v, c, d               string
		read                  func() (*debug.BuildInfo, bool)
		version, commit, date string
	}{
		{"nothing known", "", "", "", none, "v0.0.0-dev", "unknown", "unknown"},
		{"stamped by make", "v1.2.3", "deadbeef", "2026-01-02T03:04:05Z", vcs(rev, at), "v1.2.3", "deadbeef", "2026-01-02T03:04:05Z"},
		{"plain go build", "", "", "", vcs(rev, at), "v0.0.0-dev", "abc123", "2026-11-23T10:00:00Z"},
		{"plain go build, dirty tree", "", "", "", vcs(rev, at, dirty), "v0.0.0-dev", "abc123-dirty", "2026-11-23T10:00:00Z"},
		{"dirty before revision", "", "", "", vcs(dirty, rev), "v0.0.0-dev", "abc123-dirty", "unknown"},
		{"stamped commit is kept as stamped", "", "deadbeef-dirty", "", vcs(rev, dirty), "v0.0.0-dev", "deadbeef-dirty", "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := get(tc.v, tc.c, tc.d, tc.read)
			if i.Version != tc.version || i.Commit != tc.commit || i.BuildDate != tc.date {
				t.Errorf("got %s %s %s, want %s %s %s", i.Version, i.Commit, i.BuildDate, tc.version, tc.commit, tc.date)
			}
			if s := i.String(); !strings.Contains(s, tc.version) || !strings.Contains(s, tc.commit) || !strings.Contains(s, tc.date) {
				t.Errorf("String() = %q", s)
			}
		})
	}
}
