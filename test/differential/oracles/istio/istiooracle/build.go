// Package istiooracle runs istio.io/istio's own policy selection (pilot/pkg/model) on a file of
// Gateway API Gateways, Services and Istio policies and returns, per Gateway and per Service's
// waypoint, which AuthorizationPolicies, RequestAuthentications, WasmPlugins/TrafficExtensions,
// Telemetries and EnvoyFilters apply, in Istio's order.
//
// That code lives in pilot/pkg/model, whose unexported functions another module cannot call. So
// the oracle copies the module (from the Go module cache, fetched through the Go module proxy)
// into its cache folder, replaces the package's test files by the harness (testdata/harness,
// embedded below) and Istio's WasmPlugin translation (pilot/pkg/config/kube/extensions/translate.go,
// which cannot be imported from pilot/pkg/model: its package imports model), and builds the
// package's test binary. The binary is cached; nothing of Istio is kept in this repository.
package istiooracle

import (
	"bytes"
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

// IstioModule and IstioVersion are the Istio the oracle runs: the release-1.31 branch, the newest
// version the Go module proxy resolves (Istio tags no Go module releases).
const (
	IstioModule  = "istio.io/istio"
	IstioVersion = "v0.0.0-20260827124520-eed52ebb66ad"
)

// modelPackage is the package the harness joins.
const modelPackage = "pilot/pkg/model"

// harness holds the files added to Istio's pilot/pkg/model package.
//
//go:embed testdata/harness/*.go
var harness embed.FS

// Binary returns the path of the oracle binary, building it first when the cache holds none.
// The cache is $ISTIO_ORACLE_CACHE if set, else ${XDG_CACHE_HOME:-$HOME/.cache}/effectivepolicy/oracles;
// the binary's folder is named after the Istio version, the Go version and a hash of the harness,
// so a changed harness or toolchain builds a new one. The copy of Istio's source stays in one
// folder per version (src-<version>), so that a new harness recompiles only pilot/pkg/model (the
// Go build cache keys packages by their folder). A cold build compiles pilot/pkg/model and its
// dependencies (Envoy's go-control-plane, client-go, ...): about 10 minutes on 2 busy cores, once.
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
	dir := filepath.Join(cacheRoot(), fmt.Sprintf("istio-%s-%s-%s", IstioVersion, goVersion, hex.EncodeToString(h.Sum(nil)[:6])))
	bin := filepath.Join(dir, "istio-oracle.test")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// One build at a time (over every harness version: they share the source folder).
	unlock, err := lock(filepath.Join(cacheRoot(), "istio-build.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	src, err := sourceDir(ctx)
	if err != nil {
		return "", err
	}
	if err := addHarness(src, files); err != nil {
		return "", err
	}
	partial, err := os.CreateTemp(dir, "istio-oracle.test.partial-")
	if err != nil {
		return "", err
	}
	_ = partial.Close()
	defer func() { _ = os.Remove(partial.Name()) }()
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-vet=off", "-o", partial.Name(), "./"+modelPackage)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the istio %s test binary: %w\n%s", IstioVersion, err, out)
	}
	// A rename is atomic: two builds at once both succeed, the last one stays.
	if err := os.Rename(partial.Name(), bin); err != nil {
		return "", err
	}
	return bin, nil
}

// sourceDir returns the writable copy of Istio's module in the cache, copying it from the Go
// module cache when missing (a "complete" marker says the copy finished).
func sourceDir(ctx context.Context) (string, error) {
	dst := filepath.Join(cacheRoot(), "istio-src-"+IstioVersion)
	done := filepath.Join(dst, ".complete")
	if _, err := os.Stat(done); err == nil {
		return dst, nil
	}
	mod, err := moduleDir(ctx)
	if err != nil {
		return "", err
	}
	_ = os.RemoveAll(dst)
	if err := copyTree(mod, dst); err != nil {
		return "", fmt.Errorf("copying %s: %w", mod, err)
	}
	return dst, os.WriteFile(done, nil, 0o644)
}

// addHarness replaces pilot/pkg/model's test files by the harness's, and copies in Istio's
// WasmPlugin translation as a file of package model.
func addHarness(src string, files map[string][]byte) error {
	pkg := filepath.Join(src, modelPackage)
	tests, err := filepath.Glob(filepath.Join(pkg, "*_test.go"))
	if err != nil {
		return err
	}
	for _, f := range tests {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(pkg, name), b, 0o644); err != nil {
			return err
		}
	}
	tr, err := os.ReadFile(filepath.Join(src, "pilot", "pkg", "config", "kube", "extensions", "translate.go"))
	if err != nil {
		return err
	}
	tr = bytes.Replace(tr, []byte("\npackage extensions\n"), []byte("\npackage model\n"), 1)
	return os.WriteFile(filepath.Join(pkg, "zz_oracle_translate_test.go"), tr, 0o644)
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
	if d := os.Getenv("ISTIO_ORACLE_CACHE"); d != "" {
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

// moduleDir downloads the Istio module through the Go module proxy (a no-op when the
// module cache has it) and returns its directory in the module cache.
func moduleDir(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", IstioModule+"@"+IstioVersion)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	cmd.Dir = os.TempDir()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", IstioModule, IstioVersion, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", err
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", IstioModule, IstioVersion, info.Error)
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
