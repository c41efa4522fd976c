// Package kuadrantoracle runs kuadrant-operator v1.5.2's own code on a file of Gateway API objects
// and Kuadrant policies and returns what Kuadrant computes: the effective policy of every path
// GatewayClass > Gateway > Listener > Route > RouteRule for each data-plane kind, and each
// policy's Accepted / Enforced conditions.
//
// The functions that compute those answers live in kuadrant-operator's internal/controller
// package, which another module cannot import. So the oracle copies the released module (from the
// Go module cache, fetched through the Go module proxy) into a temporary directory, adds one
// harness files to internal/controller (testdata/harness, embedded below), and builds that
// package's test binary. The binary is cached; nothing of kuadrant-operator is kept in this
// repository.
package kuadrantoracle

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// OperatorModule and OperatorVersion are the kuadrant-operator release the oracle runs.
const (
	OperatorModule  = "github.com/kuadrant/kuadrant-operator"
	OperatorVersion = "v1.5.2"
)

// harness holds the files added to kuadrant-operator's internal/controller package.
//
//go:embed testdata/harness/*.go
var harness embed.FS

// Binary returns the path of the oracle binary, building it first when the cache holds none.
// The cache is $KUADRANT_ORACLE_CACHE if set, else ${XDG_CACHE_HOME:-$HOME/.cache}/effectivepolicy/oracles;
// the binary's folder is named after the kuadrant-operator version, the Go version and a hash of
// the harness, so a changed harness or toolchain builds a new one. A cold build compiles
// kuadrant-operator and its dependencies: minutes on 2 cores, once.
func Binary(ctx context.Context) (string, error) {
	goVersion, err := goEnv(ctx, "GOVERSION")
	if err != nil {
		return "", err
	}
	files, err := harnessFiles()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, name := range sortedKeys(files) {
		h.Write([]byte(name))
		h.Write(files[name])
	}
	dir := filepath.Join(cacheRoot(), fmt.Sprintf("kuadrant-%s-%s-%s", OperatorVersion, goVersion, hex.EncodeToString(h.Sum(nil)[:6])))
	bin := filepath.Join(dir, "kuadrant-oracle.test")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// One build at a time per binary (go test runs packages in parallel): the others wait, then
	// find it built.
	unlock, err := lock(filepath.Join(dir, "build.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	src, err := moduleDir(ctx)
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "kuadrant-oracle-src-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := copyTree(src, tmp); err != nil {
		return "", fmt.Errorf("copying %s: %w", src, err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(tmp, "internal", "controller", name), b, 0o644); err != nil {
			return "", err
		}
	}
	partial, err := os.CreateTemp(dir, "kuadrant-oracle.test.partial-")
	if err != nil {
		return "", err
	}
	_ = partial.Close()
	defer func() { _ = os.Remove(partial.Name()) }()
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", partial.Name(), "./internal/controller")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the kuadrant-operator %s test binary: %w\n%s", OperatorVersion, err, out)
	}
	// A rename is atomic: two builds at once both succeed, the last one stays.
	if err := os.Rename(partial.Name(), bin); err != nil {
		return "", err
	}
	return bin, nil
}

// lock takes an exclusive advisory lock on path (flock: released when the process ends, so a
// killed build leaves no stale lock).
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}

func harnessFiles() (map[string][]byte, error) {
	entries, err := fs.ReadDir(harness, "testdata/harness")
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := fs.ReadFile(harness, "testdata/harness/"+e.Name())
		if err != nil {
			return nil, err
		}
		files[e.Name()] = b
	}
	return files, nil
}

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func cacheRoot() string {
	if d := os.Getenv("KUADRANT_ORACLE_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "effectivepolicy", "oracles")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "effectivepolicy", "oracles")
	}
	return filepath.Join(home, ".cache", "effectivepolicy", "oracles")
}

func goEnv(ctx context.Context, name string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// moduleDir downloads the kuadrant-operator release through the Go module proxy (a no-op when the
// module cache has it) and returns its directory in the module cache.
func moduleDir(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", OperatorModule+"@"+OperatorVersion)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	cmd.Dir = os.TempDir()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", OperatorModule, OperatorVersion, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", err
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", OperatorModule, OperatorVersion, info.Error)
	}
	return info.Dir, nil
}

// copyTree copies the module's files into dst, writable (the module cache is read-only).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
