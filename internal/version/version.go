// Package version says which build of the project is running: the version,
// commit and build date that `make build` and `make release` stamp into the
// binaries with -ldflags -X, falling back to what the Go toolchain records
// of the checkout (vcs.revision, vcs.time) for a plain `go build`.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set with -ldflags "-X github.com/effectivepolicy-dev/effectivepolicy/internal/version.version=..."
// (and commit, buildDate); see hack/ldflags.sh.
var (
	version   = ""
	commit    = ""
	buildDate = ""
)

// Info is one binary's build.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	BuildDate string `json:"buildDate"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the build information of the running binary.
func Get() Info {
	return get(version, commit, buildDate, debug.ReadBuildInfo)
}

func get(v, c, d string, read func() (*debug.BuildInfo, bool)) Info {
	i := Info{Version: v, Commit: c, BuildDate: d, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := read(); ok {
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if i.Commit == "" {
					i.Commit = s.Value
					if modified {
						i.Commit += "-dirty"
					}
				}
			case "vcs.time":
				if i.BuildDate == "" {
					i.BuildDate = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
				if modified && c == "" && i.Commit != "" {
					i.Commit += "-dirty"
				}
			}
		}
	}
	if i.Version == "" {
		i.Version = "v0.0.0-dev"
	}
	if i.Commit == "" {
		i.Commit = "unknown"
	}
	if i.BuildDate == "" {
		i.BuildDate = "unknown"
	}
	return i
}

// String is the line `--version` prints.
func (i Info) String() string {
	return fmt.Sprintf("%s (commit %s, built %s, %s %s)", i.Version, i.Commit, i.BuildDate, i.GoVersion, i.Platform)
}
