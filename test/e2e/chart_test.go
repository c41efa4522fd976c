//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// helmTemplate renders charts/effectivepolicy into effectivepolicy-system with extra helm
// arguments, with the helm hack/helm.sh builds and caches, and returns the YAML.
func helmTemplate(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot, "hack", "helm.sh"), "--print-path")
	cmd.Dir = repoRoot
	path, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/helm.sh --print-path: %v", err)
	}
	base := []string{"template", "effectivepolicy", filepath.Join(repoRoot, "charts", "effectivepolicy"), "--namespace", artifactsNS}
	h := exec.Command(strings.TrimSpace(string(path)), append(base, args...)...)
	h.Env = append(os.Environ(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	out, err := h.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("helm template %v: %v\n%s", args, err, stderr)
	}
	return string(out)
}

// TestChartServerDryRun: the kube-apiserver accepts every object the Helm chart renders, in each
// certificate mode, in a server-side dry run (cert-manager's kinds excepted: no CRDs here, as for
// the kustomize overlay); and the chart installs what artifacts/ installs: the same objects by
// kind and name, with the same RBAC rules, so the two ways to install cannot drift apart.
func TestChartServerDryRun(t *testing.T) {
	kubectl(t, "get", "namespace", artifactsNS)
	for _, tc := range []struct {
		name   string
		args   []string
		reject map[string]bool
	}{
		{"selfSigned", nil, nil},
		{"certManager", []string{"--set", "certs.mode=certManager"}, map[string]bool{"Issuer": true, "Certificate": true}},
		{"existingSecret", []string{"--set", "certs.mode=existingSecret", "--set", "certs.existingSecret=ep-tls", "--set", "certs.caBundle=" + "Zm9v"}, nil},
		{"one replica without PDB with a cache claim", []string{"--set", "replicas=1", "--set", "podDisruptionBudget.enabled=false", "--set", "cache.existingClaim=ep-cache"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := helmTemplate(t, tc.args...)
			file := filepath.Join(t.TempDir(), "chart.yaml")
			if err := os.WriteFile(file, []byte(out), 0o600); err != nil {
				t.Fatal(err)
			}
			checkServerDryRun(t, parseManifests(t, "helm template", out), []string{"-f", file}, tc.reject)
		})
	}

	t.Run("the objects and rules of artifacts/", func(t *testing.T) {
		chart := parseManifests(t, "helm template", helmTemplate(t))
		kustomized := render(t, copyArtifacts(t))
		// kustomize's configMapGenerator appends a hash of the content to the ConfigMap's name.
		hashSuffix := regexp.MustCompile(`-[a-z0-9]{10}$`)
		ids := func(objs []*unstructured.Unstructured, skip func(*unstructured.Unstructured) bool) []string {
			var out []string
			for _, u := range objs {
				if skip(u) {
					continue
				}
				id := objID(u)
				if u.GetKind() == "ConfigMap" {
					id = hashSuffix.ReplaceAllString(id, "")
				}
				out = append(out, id)
			}
			sort.Strings(out)
			return out
		}
		// The chart installs into the release's namespace (helm creates it) and brings its serving
		// Secret in this mode; the kustomize base creates the Namespace, an overlay the Secret.
		chartIDs := ids(chart, func(u *unstructured.Unstructured) bool { return u.GetKind() == "Secret" })
		baseIDs := ids(kustomized, func(u *unstructured.Unstructured) bool { return u.GetKind() == "Namespace" })
		if !reflect.DeepEqual(chartIDs, baseIDs) {
			t.Errorf("objects:\n chart     %v\n artifacts %v", chartIDs, baseIDs)
		}
		rules := func(objs []*unstructured.Unstructured) map[string]interface{} {
			out := map[string]interface{}{}
			for _, u := range objs {
				switch u.GetKind() {
				case "ClusterRole", "Role":
					out[objID(u)] = []interface{}{u.Object["rules"], u.Object["aggregationRule"]}
				case "ClusterRoleBinding", "RoleBinding":
					out[objID(u)] = []interface{}{u.Object["roleRef"], u.Object["subjects"]}
				}
			}
			return out
		}
		cr, kr := rules(chart), rules(kustomized)
		for id, k := range kr {
			if !reflect.DeepEqual(cr[id], k) {
				t.Errorf("%s: chart %v, artifacts %v", id, cr[id], k)
			}
		}
	})
}
