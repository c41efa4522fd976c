package main

import (
	"os"
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
