//go:build e2e

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
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

// chartNS is the namespace the chart's dry runs install into: fresh, and enforcing (and warning
// on) the "restricted" Pod Security Standard, as artifacts/base/namespace.yaml labels its own.
const chartNS = "e2e-chart"

// helmTemplate renders charts/effectivepolicy into namespace ns with extra helm arguments, with
// the helm hack/helm.sh builds and caches, and returns the YAML.
func helmTemplate(t *testing.T, ns string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot, "hack", "helm.sh"), "--print-path")
	cmd.Dir = repoRoot
	path, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/helm.sh --print-path: %v", err)
	}
	base := []string{"template", "effectivepolicy", filepath.Join(repoRoot, "charts", "effectivepolicy"), "--namespace", ns}
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
// certificate mode, in a server-side dry run into a namespace enforcing the "restricted" Pod
// Security Standard (a warning fails the test too; cert-manager's kinds excepted: no CRDs here, as
// for the kustomize overlay); each mode wires the serving certificate as it says; and the chart
// installs what artifacts/ installs: the same objects by kind and name, with the same RBAC rules,
// so the two ways to install cannot drift apart.
func TestChartServerDryRun(t *testing.T) {
	createNamespace(t, chartNS)
	kubectl(t, "label", "namespace", chartNS,
		"pod-security.kubernetes.io/enforce=restricted", "pod-security.kubernetes.io/enforce-version=latest",
		"pod-security.kubernetes.io/warn=restricted", "pod-security.kubernetes.io/warn-version=latest")
	for _, tc := range []struct {
		name   string
		args   []string
		reject map[string]bool
		check  func(t *testing.T, objs []*unstructured.Unstructured)
	}{
		{"selfSigned", nil, nil, checkSelfSignedCert},
		{"certManager", []string{"--set", "certs.mode=certManager"}, map[string]bool{"Issuer": true, "Certificate": true}, checkCertManagerWiring},
		{"existingSecret", []string{"--set", "certs.mode=existingSecret", "--set", "certs.existingSecret=ep-tls", "--set", "certs.caBundle=" + "Zm9v"}, nil, nil},
		{"one replica without PDB with a cache claim", []string{"--set", "replicas=1", "--set", "podDisruptionBudget.enabled=false", "--set", "cache.existingClaim=ep-cache"}, nil, nil},
		{"monitoring", []string{"--set", "monitoring.prometheusRule.enabled=true", "--set", "monitoring.dashboard.enabled=true"}, map[string]bool{"PrometheusRule": true}, func(t *testing.T, objs []*unstructured.Unstructured) {
			if len(byKind(objs, "PrometheusRule")) != 1 || len(byKind(objs, "ConfigMap")) != 2 {
				t.Errorf("monitoring enabled: want a PrometheusRule and the dashboard's ConfigMap, got %v", sortedObjIDs(objs, func(*unstructured.Unstructured) bool { return false }))
			}
		}},
		{"first step of a two-step install", []string{"--set", "apiService.enabled=false"}, nil, func(t *testing.T, objs []*unstructured.Unstructured) {
			if len(byKind(objs, "APIService")) != 0 {
				t.Error("apiService.enabled=false rendered an APIService")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := helmTemplate(t, chartNS, tc.args...)
			objs := parseManifests(t, "helm template", out)
			if tc.check != nil {
				tc.check(t, objs)
			}
			file := filepath.Join(t.TempDir(), "chart.yaml")
			if err := os.WriteFile(file, []byte(out), 0o600); err != nil {
				t.Fatal(err)
			}
			checkServerDryRun(t, objs, []string{"-f", file}, tc.reject)
		})
	}

	t.Run("the objects and rules of artifacts/", testChartMatchesArtifacts)
}

// configMapHashSuffix is what kustomize's configMapGenerator appends to the
// ConfigMap's name: a hash of the content.
var configMapHashSuffix = regexp.MustCompile(`-[a-z0-9]{10}$`)

// testChartMatchesArtifacts: the chart renders the objects of the kustomize
// base, with the same RBAC rules and bindings.
func testChartMatchesArtifacts(t *testing.T) {
	chart := parseManifests(t, "helm template", helmTemplate(t, artifactsNS))
	kustomized := render(t, copyArtifacts(t))
	// The chart installs into the release's namespace (helm creates it) and brings its serving
	// Secret in this mode; the kustomize base creates the Namespace, an overlay the Secret.
	chartIDs := sortedObjIDs(chart, func(u *unstructured.Unstructured) bool { return u.GetKind() == "Secret" })
	baseIDs := sortedObjIDs(kustomized, func(u *unstructured.Unstructured) bool { return u.GetKind() == "Namespace" })
	if !reflect.DeepEqual(chartIDs, baseIDs) {
		t.Errorf("objects:\n chart     %v\n artifacts %v", chartIDs, baseIDs)
	}
	cr, kr := rbacRulesByID(chart), rbacRulesByID(kustomized)
	for id, k := range kr {
		if !reflect.DeepEqual(cr[id], k) {
			t.Errorf("%s: chart %v, artifacts %v", id, cr[id], k)
		}
	}
}

// sortedObjIDs returns the objID of each object skip does not skip, a
// ConfigMap's without its kustomize hash, sorted.
func sortedObjIDs(objs []*unstructured.Unstructured, skip func(*unstructured.Unstructured) bool) []string {
	var out []string
	for _, u := range objs {
		if skip(u) {
			continue
		}
		id := objID(u)
		if u.GetKind() == "ConfigMap" {
			id = configMapHashSuffix.ReplaceAllString(id, "")
		}
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// rbacRulesByID returns, by objID, the rules and aggregationRule of each
// (Cluster)Role and the roleRef and subjects of each (Cluster)RoleBinding.
func rbacRulesByID(objs []*unstructured.Unstructured) map[string]interface{} {
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

// byKind indexes the objects of one kind by name.
func byKind(objs []*unstructured.Unstructured, kind string) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for _, u := range objs {
		if u.GetKind() == kind {
			out[u.GetName()] = u
		}
	}
	return out
}

// checkSelfSignedCert: the generated serving certificate names the Service and is signed by the
// CA the APIService trusts.
func checkSelfSignedCert(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	secret := byKind(objs, "Secret")["effectivepolicy-apiserver-serving-cert"]
	apiSvc := byKind(objs, "APIService")["v1alpha1.effectivepolicy.dev"]
	if secret == nil || apiSvc == nil {
		t.Fatal("no serving Secret or no APIService")
	}
	data, _, _ := unstructured.NestedStringMap(secret.Object, "data")
	caBundle, _, _ := unstructured.NestedString(apiSvc.Object, "spec", "caBundle")
	if caBundle == "" || caBundle != data["ca.crt"] {
		t.Fatalf("APIService caBundle (%d bytes) is not the Secret's ca.crt (%d bytes)", len(caBundle), len(data["ca.crt"]))
	}
	pool := x509.NewCertPool()
	if ca, err := base64.StdEncoding.DecodeString(caBundle); err != nil || !pool.AppendCertsFromPEM(ca) {
		t.Fatalf("caBundle is no base64 PEM certificate: %v", err)
	}
	crtPEM, _ := base64.StdEncoding.DecodeString(data["tls.crt"])
	block, _ := pem.Decode(crtPEM)
	if block == nil {
		t.Fatal("tls.crt is no PEM")
	}
	crt, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	host := "effectivepolicy-apiserver." + chartNS + ".svc"
	if _, err := crt.Verify(x509.VerifyOptions{DNSName: host, Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("tls.crt does not verify for %s against the caBundle: %v", host, err)
	}
	keyPEM, _ := base64.StdEncoding.DecodeString(data["tls.key"])
	if _, err := tls.X509KeyPair(crtPEM, keyPEM); err != nil {
		t.Errorf("tls.key does not match tls.crt: %v", err)
	}
}

// checkCertManagerWiring: cert-manager's cainjector fills the caBundle from the serving
// Certificate, whose Secret the Deployment mounts; the chart writes neither Secret nor caBundle.
func checkCertManagerWiring(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	apiSvc := byKind(objs, "APIService")["v1alpha1.effectivepolicy.dev"]
	if apiSvc == nil {
		t.Fatal("no APIService")
	}
	if got, want := apiSvc.GetAnnotations()["cert-manager.io/inject-ca-from"], chartNS+"/effectivepolicy-apiserver-serving-cert"; got != want {
		t.Errorf("APIService cert-manager.io/inject-ca-from %q, want %q", got, want)
	}
	if b, found, _ := unstructured.NestedString(apiSvc.Object, "spec", "caBundle"); found {
		t.Errorf("APIService has a caBundle (%d bytes); cainjector fills it in", len(b))
	}
	if len(byKind(objs, "Secret")) != 0 {
		t.Error("a Secret rendered in certManager mode; cert-manager writes it")
	}
	crt := byKind(objs, "Certificate")["effectivepolicy-apiserver-serving-cert"]
	if crt == nil {
		t.Fatal("no serving Certificate")
	}
	if name, _, _ := unstructured.NestedString(crt.Object, "spec", "secretName"); name != "effectivepolicy-apiserver-serving-cert" {
		t.Errorf("the serving Certificate writes Secret %q, not the one the Deployment mounts", name)
	}
}
