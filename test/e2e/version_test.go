//go:build e2e

package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The server `make build` produced says which commit it was built from (hack/ldflags.sh): the
// commit of this checkout, so an operator can tell which build a pod runs.
func TestServerVersion(t *testing.T) {
	head, err := exec.Command("git", "-C", repoRoot, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	out, err := exec.Command(filepath.Join(repoRoot, "bin", "effectivepolicy-apiserver"), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, out)
	}
	line := string(out)
	commit := strings.TrimSpace(string(head))
	if !strings.HasPrefix(line, "effectivepolicy-apiserver v") || !strings.Contains(line, "(commit "+commit) {
		t.Errorf("--version = %q, want the version and commit %s", line, commit)
	}
}
