//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestImageServes: the image `make image` assembles (bin/effectivepolicy-apiserver-image.tar,
// built by `make test-e2e`) starts and serves against the local control plane. No container
// engine runs here (docs/install.md), so the test unpacks the image's own filesystem and runs its
// entrypoint from there, as a replica behind the APIService, with the first server stopped: every
// answer then comes from the image's binary.
func TestImageServes(t *testing.T) {
	archive := filepath.Join(repoRoot, "bin", "effectivepolicy-apiserver-image.tar")
	if _, err := os.Stat(archive); err != nil {
		t.Fatalf("%v: `make test-e2e` builds it (make image)", err)
	}
	root := t.TempDir()
	cmd := exec.Command(filepath.Join(repoRoot, "hack", "image.sh"), "extract", root)
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/image.sh extract: %v", err)
	}
	var cfg struct {
		OS, Architecture string
		Config           struct {
			Entrypoint []string
			User       string
		} `json:"config"`
	}
	if err := json.Unmarshal(out, &cfg); err != nil {
		t.Fatalf("image config: %v\n%s", err, out)
	}
	if cfg.OS != "linux" || len(cfg.Config.Entrypoint) != 1 || cfg.Config.User != "65532:65532" {
		t.Fatalf("image config: os %q, entrypoint %q, user %q; want linux, one entrypoint, 65532:65532",
			cfg.OS, cfg.Config.Entrypoint, cfg.Config.User)
	}
	entry := filepath.Join(root, filepath.FromSlash(cfg.Config.Entrypoint[0]))
	v, err := exec.Command(entry, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(v), "commit") {
		t.Fatalf("%s --version: %v\n%s", cfg.Config.Entrypoint[0], err, v)
	}

	before, err := effectivePolicyNames(t)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	localUpEnv(t, []string{"EP_SERVER_BIN=" + entry}, "start-replica", "3")
	t.Cleanup(func() {
		localUp(t, "start-server")
		localUp(t, "stop-replica", "3")
	})
	localUp(t, "stop-server")
	eventually(t, 60*time.Second, "the image's server answers with the same EffectivePolicies", func() error {
		after, err := effectivePolicyNames(t)
		if err != nil {
			return err
		}
		if strings.Join(after, ",") != strings.Join(before, ",") {
			t.Fatalf("first server %v, image's %v", before, after)
		}
		return nil
	})
}
