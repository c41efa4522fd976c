package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// krewPlugin is the part of a krew manifest (krew.googlecontainertools.github.com/v1alpha2)
// the test reads.
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version   string `json:"version"`
		Platforms []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string     `json:"uri"`
			SHA256 string     `json:"sha256"`
			Bin    string     `json:"bin"`
			Files  []krewFile `json:"files"`
		} `json:"platforms"`
	} `json:"spec"`
}

type krewFile struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// TestKrewManifest: plugins/krew/effectivepolicy.yaml installs this command (its directory's
// name is the binary's) as "kubectl effectivepolicy" on the platforms `make release` builds.
func TestKrewManifest(t *testing.T) {
	data, err := os.ReadFile("../../plugins/krew/effectivepolicy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var p krewPlugin
	if err := yaml.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	binary := filepath.Base(wd)
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" ||
		"kubectl-"+p.Metadata.Name != binary || !regexp.MustCompile(`^v\d+\.\d+\.\d+`).MatchString(p.Spec.Version) {
		t.Errorf("header: %s %s %s %s", p.APIVersion, p.Kind, p.Metadata.Name, p.Spec.Version)
	}
	var platforms []string
	for _, pl := range p.Spec.Platforms {
		osArch := pl.Selector.MatchLabels["os"] + "-" + pl.Selector.MatchLabels["arch"]
		platforms = append(platforms, osArch)
		if pl.Bin != binary || !strings.HasSuffix(pl.URI, "/"+binary+"-"+p.Spec.Version+"-"+osArch+".tar.gz") ||
			!regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(pl.SHA256) {
			t.Errorf("%s: bin %q, uri %q, sha256 %q", osArch, pl.Bin, pl.URI, pl.SHA256)
		}
		if !slices.ContainsFunc(pl.Files, func(f krewFile) bool { return f.From == binary }) {
			t.Errorf("%s: the archive's files do not include %s", osArch, binary)
		}
	}
	slices.Sort(platforms)
	if want := []string{"darwin-amd64", "darwin-arm64", "linux-amd64", "linux-arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("platforms %v, want %v", platforms, want)
	}
}

// TestKrewPackage: hack/krew-package.sh (run by `make release` after the build) archives the
// plugin per platform and writes the manifest with this release's version and each archive's
// checksum, leaving out platforms not built; the archives are reproducible. Stand-in binaries
// keep it fast: what is tested is the packaging.
func TestKrewPackage(t *testing.T) {
	const version = "v1.2.3"
	built := []string{"linux/amd64", "darwin/arm64"}
	license, err := os.ReadFile("../../LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	pack := func() (string, krewPlugin) {
		dist := t.TempDir()
		for _, pl := range built {
			name := "kubectl-effectivepolicy-" + version + "-" + strings.ReplaceAll(pl, "/", "-")
			if err := os.WriteFile(filepath.Join(dist, name), []byte("stand-in for "+pl), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("../../hack/krew-package.sh", append([]string{dist, version}, built...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("krew-package.sh: %v\n%s", err, out)
		}
		data, err := os.ReadFile(filepath.Join(dist, "effectivepolicy.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var p krewPlugin
		if err := yaml.Unmarshal(data, &p); err != nil {
			t.Fatalf("manifest: %v\n%s", err, data)
		}
		return dist, p
	}
	dist, p := pack()
	if p.Spec.Version != version || p.Metadata.Name != "effectivepolicy" {
		t.Errorf("version %q name %q", p.Spec.Version, p.Metadata.Name)
	}
	var platforms []string
	for _, pl := range p.Spec.Platforms {
		osArch := pl.Selector.MatchLabels["os"] + "-" + pl.Selector.MatchLabels["arch"]
		platforms = append(platforms, osArch)
		archive := "kubectl-effectivepolicy-" + version + "-" + osArch + ".tar.gz"
		if want := "/releases/download/" + version + "/" + archive; !strings.HasSuffix(pl.URI, want) {
			t.Errorf("%s: uri %q, want ...%s", osArch, pl.URI, want)
		}
		data, err := os.ReadFile(filepath.Join(dist, archive))
		if err != nil {
			t.Fatal(err)
		}
		if sum := fmt.Sprintf("%x", sha256.Sum256(data)); pl.SHA256 != sum {
			t.Errorf("%s: sha256 %s, the archive's is %s", osArch, pl.SHA256, sum)
		}
		files := untar(t, data)
		if got := files["kubectl-effectivepolicy"]; got.content != "stand-in for "+strings.ReplaceAll(osArch, "-", "/") || got.mode&0o111 == 0 {
			t.Errorf("%s: binary %q, mode %v", osArch, got.content, got.mode)
		}
		if files["LICENSE"].content != string(license) || len(files) != 2 {
			t.Errorf("%s: archive holds %d files, LICENSE %d bytes", osArch, len(files), len(files["LICENSE"].content))
		}
	}
	slices.Sort(platforms)
	if want := []string{"darwin-arm64", "linux-amd64"}; !slices.Equal(platforms, want) {
		t.Errorf("platforms %v, want the ones built, %v", platforms, want)
	}
	_, again := pack()
	for i := range p.Spec.Platforms {
		if again.Spec.Platforms[i].SHA256 != p.Spec.Platforms[i].SHA256 {
			t.Errorf("the archives are not reproducible: %s then %s", p.Spec.Platforms[i].SHA256, again.Spec.Platforms[i].SHA256)
		}
	}
}

type tarFile struct {
	content string
	mode    os.FileMode
}

func untar(t *testing.T, data []byte) map[string]tarFile {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string]tarFile{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = tarFile{content: string(b), mode: h.FileInfo().Mode()}
	}
}
