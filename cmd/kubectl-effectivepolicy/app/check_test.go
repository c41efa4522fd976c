package app

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	demoExpectations = "../../../hack/demo/check/expectations.yaml"
	demoFix          = "../../../hack/demo/check/frosting-timeouts.yaml"
)

// TestCheckOffline: the demo's expectations over the demo's manifests
// fail on the frosting route (its 30s request timeout is the Gateway's
// default), and hold once the route gets a timeout policy of its own; the
// output is pinned, and the exit status says which.
func TestCheckOffline(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		status int
	}{
		{"check-demo-fails", with(demo, "check", "-f", demoExpectations), 1},
		{"check-demo-fixed", with(demo, "check", "-f", demoExpectations, "-f", demoFix), 0},
		{"check-demo-fails-json", with(demo, "check", "-f", demoExpectations, "-o", "json"), 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, err := run(t, "", c.args...)
			if got := ExitCode(err); got != c.status {
				t.Fatalf("exit status %d (%v), want %d\nstdout: %s\nstderr: %s", got, err, c.status, out, errOut)
			}
			if Message(err) != "" {
				t.Errorf("a failing check prints no error, got %q", Message(err))
			}
			checkGolden(t, c.name, out)
		})
	}
}

// TestCheckJUnit: --junit writes a test case per expectation and target,
// the failing one with what was found.
func TestCheckJUnit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.xml")
	if _, _, err := run(t, "", with(demo, "check", "-f", demoExpectations, "--junit", path)...); ExitCode(err) != 1 {
		t.Fatalf("exit status %d (%v), want 1", ExitCode(err), err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var report struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &report); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	var failed []string
	for _, s := range report.Suites {
		for _, c := range s.Cases {
			if c.Failure != nil {
				failed = append(failed, s.Name+" / "+c.Name+": "+c.Failure.Message)
			}
		}
	}
	want := `routes on cupcakes answer within 15s / HTTPRoute baker/frosting: TimeoutPolicy.demo.effectivepolicy.dev via Gateway infra/cupcakes: request is "30s", beyond max 15s (set by infra/gateway-timeouts)`
	if report.Tests != 12 || report.Failures != 1 || len(report.Suites) != 4 || strings.Join(failed, "\n") != want {
		t.Errorf("JUnit: %d tests, %d failures, %d suites, failed:\n%s\n%s", report.Tests, report.Failures, len(report.Suites), strings.Join(failed, "\n"), data)
	}
}

// TestCheckCannotEvaluate: exit status 2, and why, when the expectations
// cannot be evaluated.
func TestCheckCannotEvaluate(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: effectivepolicy.dev/v1alpha1\nkind: Expectations\nexpectations:\n- name: a\n  targets: {kind: HTTPRoute}\n  policy: {kind: TimeoutPolicy, outcome: Enforced}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"an unknown field, with its line", with(demo, "check", "-f", bad), bad + `:6: unknown field "outcome"`},
		{"no expectations", with(demo, "check"), "no expectations in -f"},
		{"no -f", []string{"check"}, "check needs expectations: -f FILE"},
		{"manifests without --offline", []string{"check", "-f", demoExpectations, "-f", "../../../hack/demo"}, "is a manifest: against the cluster -f takes expectations only"},
		{"an argument", with(demo, "check", "-f", demoExpectations, "extra"), `check takes its expectations with -f FILE, not "extra"`},
		{"a bad output", with(demo, "check", "-f", demoExpectations, "-o", "wide"), "--output must be json, yaml or empty"},
		{"a bad flag", with(demo, "check", "-f", demoExpectations, "--junti", "x"), "unknown flag: --junti"},
		{"missing file", with(demo, "check", "-f", "testdata/nope.yaml"), "testdata/nope.yaml: no such file or directory"},
		{"an unwritable report", with(demo, "check", "-f", demoExpectations, "--junit", filepath.Join(t.TempDir(), "no", "dir.xml")), "no such file or directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := run(t, "", c.args...)
			if ExitCode(err) != 2 || !strings.Contains(Message(err), c.want) {
				t.Errorf("exit status %d, error %v; want 2 and one saying %q", ExitCode(err), err, c.want)
			}
		})
	}
}
