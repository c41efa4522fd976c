// Package kgatewayoracle runs kgateway v2.2.0's own translator on a file of Gateway API objects
// and kgateway policies and returns what kgateway makes of it: per Gateway, the Envoy route
// configurations with, on every virtual host and route, the policy each TrafficPolicy merge unit
// came from; the Envoy listeners with the policy each ListenerPolicy and HTTPListenerPolicy
// setting came from; the clusters' BackendConfigPolicy settings; and the policies' statuses.
//
// kgateway's translator harness (test/translator, which its golden tests
// pkg/kgateway/translator/gateway/gateway_translator_test.go call) and the code it drives live in
// kgateway's own module, much of it in internal packages, and the harness wants a *testing.T. So
// the oracle copies the released module (from the Go module cache, fetched through the Go module
// proxy) into its cache, adds one harness file to test/translator (testdata/harness, embedded
// below) and builds that package's test binary. Nothing of kgateway is kept in this repository.
package kgatewayoracle

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

// Module and Version are the kgateway release the oracle runs.
const (
	Module  = "github.com/kgateway-dev/kgateway/v2"
	Version = "v2.2.0"
)

// harnessPackage is the package of kgateway's module the harness file joins.
const harnessPackage = "test/translator"

//go:embed testdata/harness/*.go
var harness embed.FS

// Binary returns the oracle binary and the directory it must run in (the copy of kgateway's
// module: the harness reads kgateway's CRDs from the root of the git work tree it runs in,
// test/testutils GitRootDirectory), building both first when the cache holds none. The cache is
// $KGATEWAY_ORACLE_CACHE if set, else ${XDG_CACHE_HOME:-$HOME/.cache}/effectivepolicy/oracles;
// the folder is named after the kgateway version, the Go version and a hash of the harness. A
// cold build compiles kgateway and its dependencies (Envoy's go-control-plane, Istio's krt,
// controller-runtime, ...): many minutes on 2 cores, once.
func Binary(ctx context.Context) (bin, dir string, err error) {
	goVersion, err := goEnv(ctx, "GOVERSION")
	if err != nil {
		return "", "", err
	}
	files, err := harnessFiles()
	if err != nil {
		return "", "", err
	}
	h := sha256.New()
	for _, name := range sortedKeys(files) {
		h.Write([]byte(name))
		h.Write(files[name])
	}
	root := filepath.Join(cacheRoot(), fmt.Sprintf("kgateway-%s-%s-%s", Version, goVersion, hex.EncodeToString(h.Sum(nil)[:6])))
	bin, src := filepath.Join(root, "kgateway-oracle.test"), filepath.Join(root, "src")
	if _, err := os.Stat(bin); err == nil {
		return bin, src, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", "", err
	}
	// One build at a time per binary: the others wait, then find it built.
	unlock, err := lock(filepath.Join(root, "build.lock"))
	if err != nil {
		return "", "", err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, src, nil
	}
	if err := prepareSource(ctx, src, files); err != nil {
		return "", "", err
	}
	partial, err := os.CreateTemp(root, "kgateway-oracle.test.partial-")
	if err != nil {
		return "", "", err
	}
	_ = partial.Close()
	defer func() { _ = os.Remove(partial.Name()) }()
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", partial.Name(), "./"+harnessPackage)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("building the kgateway %s test binary: %w\n%s", Version, err, out)
	}
	if err := os.Rename(partial.Name(), bin); err != nil {
		return "", "", err
	}
	return bin, src, nil
}

// prepareSource copies kgateway's module into src (afresh), adds the harness files and makes src
// the root of a git work tree, where the harness finds kgateway's CRDs.
func prepareSource(ctx context.Context, src string, files map[string][]byte) error {
	mod, err := moduleDir(ctx)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(src); err != nil {
		return err
	}
	if err := copyTree(mod, src); err != nil {
		return fmt.Errorf("copying %s: %w", mod, err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(src, harnessPackage, name), b, 0o644); err != nil {
			return err
		}
	}
	cmd := exec.CommandContext(ctx, "git", "init", "-q", src)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git init %s: %w\n%s", src, err, out)
	}
	return nil
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
	if d := os.Getenv("KGATEWAY_ORACLE_CACHE"); d != "" {
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

// moduleDir downloads the kgateway release through the Go module proxy (a no-op when the module
// cache has it) and returns its directory in the module cache.
func moduleDir(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", Module+"@"+Version)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	cmd.Dir = os.TempDir()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", Module, Version, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", err
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", Module, Version, info.Error)
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
