//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The alerts of charts/effectivepolicy/monitoring/alerts.yaml, evaluated by Prometheus's own rule
// parser and PromQL engine (test/alerts, a module of its own: Prometheus needs newer Kubernetes
// libraries than the server builds with) on the /metrics of the running servers.

// monitoringObjects renders the optional monitoring objects of the chart and of the kustomize
// component, checks that both ways install the same rules and dashboard, and returns the chart's
// PrometheusRule and dashboard ConfigMap.
func monitoringObjects(t *testing.T) (rule, dashboard *unstructured.Unstructured) {
	t.Helper()
	chart := parseManifests(t, "helm template", helmTemplate(t, artifactsNS,
		"--set", "monitoring.prometheusRule.enabled=true", "--set", "monitoring.dashboard.enabled=true"))
	dir := copyArtifacts(t)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"),
		[]byte("resources:\n- base\ncomponents:\n- components/monitoring\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kustomized := render(t, dir)
	one := func(source string, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
		var found []*unstructured.Unstructured
		for _, u := range objs {
			if u.GetKind() == kind && u.GetName() == name {
				found = append(found, u)
			}
		}
		if len(found) != 1 {
			t.Fatalf("%s: %d %s %s, want 1", source, len(found), kind, name)
		}
		return found[0]
	}
	rule = one("chart", chart, "PrometheusRule", "effectivepolicy-apiserver")
	dashboard = one("chart", chart, "ConfigMap", "effectivepolicy-dashboard")
	kRule := one("kustomize", kustomized, "PrometheusRule", "effectivepolicy-apiserver")
	kDashboard := one("kustomize", kustomized, "ConfigMap", "effectivepolicy-dashboard")
	if !reflect.DeepEqual(rule.Object["spec"], kRule.Object["spec"]) {
		t.Errorf("the chart's and artifacts/components/monitoring's PrometheusRule specs differ:\n chart     %v\n kustomize %v", rule.Object["spec"], kRule.Object["spec"])
	}
	var cj, kj interface{}
	for _, x := range []struct {
		u   *unstructured.Unstructured
		out *interface{}
	}{{dashboard, &cj}, {kDashboard, &kj}} {
		data, _, _ := unstructured.NestedString(x.u.Object, "data", "effectivepolicy.json")
		if err := json.Unmarshal([]byte(data), x.out); err != nil {
			t.Fatalf("dashboard %s: %v", x.u.GetNamespace(), err)
		}
	}
	if !reflect.DeepEqual(cj, kj) {
		t.Error("the chart's and artifacts/components/monitoring's dashboards differ")
	}
	if !reflect.DeepEqual(dashboard.GetLabels()["grafana_dashboard"], kDashboard.GetLabels()["grafana_dashboard"]) {
		t.Errorf("dashboard labels: chart %v, kustomize %v", dashboard.GetLabels(), kDashboard.GetLabels())
	}
	return rule, dashboard
}

// writeRuleFile writes the PrometheusRule's spec as a Prometheus rule file (the two share the
// format: the operator hands spec to Prometheus) and returns its path.
func writeRuleFile(t *testing.T, rule *unstructured.Unstructured) string {
	t.Helper()
	b, err := yaml.Marshal(rule.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// buildAlertEval builds test/alerts into a temporary directory (hack/e2e.sh warms the build cache
// first, so that the cold build of Prometheus does not count against the suite's timeout).
func buildAlertEval(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "alerteval")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join(repoRoot, "test", "alerts")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building test/alerts: %v\n%s", err, out)
	}
	return bin
}

// scrape is one /metrics body and the job label Prometheus would give its samples.
type scrape struct{ job, body string }

// scrapePort GETs /metrics from a port of the local control plane (our server, a replica, or
// kube-apiserver), as the local admin.
func scrapePort(t *testing.T, job, port string) (scrape, error) {
	t.Helper()
	code, body, err := serverHTTP(t, port, "/metrics")
	if err != nil {
		return scrape{}, err
	}
	if code != http.StatusOK {
		return scrape{}, fmt.Errorf("%s /metrics: %d %.200s", job, code, body)
	}
	return scrape{job, body}, nil
}

// firing is, per alert, the series its expression returns.
type firing map[string][]map[string]string

// evalAlerts runs alerteval on the rule file and the scrapes.
func evalAlerts(t *testing.T, bin, rules string, scrapes ...scrape) (firing, error) {
	t.Helper()
	dir := t.TempDir()
	args := []string{"-rules", rules}
	for _, s := range scrapes {
		f := filepath.Join(dir, s.job+".txt")
		if err := os.WriteFile(f, []byte(s.body), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, s.job+"="+f)
	}
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("alerteval: %v\n%s", err, stderr.String())
	}
	var f firing
	if err := json.Unmarshal(out, &f); err != nil {
		return nil, fmt.Errorf("alerteval output: %v\n%s", err, out)
	}
	return f, nil
}

// values returns the sorted, distinct values of label among the series of alert whose labels
// include every pair of match.
func (f firing) values(alert, label string, match map[string]string) []string {
	seen := map[string]bool{}
next:
	for _, s := range f[alert] {
		for k, v := range match {
			if s[k] != v {
				continue next
			}
		}
		seen[s[label]] = true
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// dashboardMetrics returns the effectivepolicy_* metric names the dashboard's queries use.
func dashboardMetrics(t *testing.T, dashboard *unstructured.Unstructured) []string {
	t.Helper()
	data, _, _ := unstructured.NestedString(dashboard.Object, "data", "effectivepolicy.json")
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`effectivepolicy_[a-z_]+`).FindAllString(data, -1) {
		seen[strings.TrimSuffix(m, "_bucket")] = true
	}
	var out []string
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}
