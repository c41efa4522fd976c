package app

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	k8stesting "k8s.io/client-go/testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned/fake"
)

// The sets diff --offline compares in the tests: the demo, the demo with
// baker-timeouts changed (testdata/demo-new), and the GEP-713 examples 1
// and 2 on their shared CRDs and topology.
var (
	demoDir       = "../../../hack/demo"
	demoNew       = "testdata/demo-new"
	proposedRetry = "../../../hack/demo/proposed/retry-all-1.yaml"
	scenarios     = []string{"-f", "../../../test/scenarios/crds", "-f", "../../../test/scenarios/topology.yaml"}
	example1Set   = "../../../test/scenarios/gep713-example1-direct/policies.yaml"
	example2Set   = "../../../test/scenarios/gep713-example2-defaults-overrides/policies.yaml"
)

// TestDiffOffline: diff --offline's changes (golden), in the three forms,
// and its exit status: 1 when an effective policy changes, 0 when none does.
func TestDiffOffline(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		status int
	}{
		{"demo-diff-offline", []string{"diff", "--offline", demoDir, demoNew}, 1},
		{"demo-diff-offline-yaml", []string{"diff", "--offline", demoDir, demoNew, "-o", "yaml"}, 1},
		{"demo-diff-offline-color", []string{"diff", "--offline", demoDir, demoNew, "--color=always"}, 1},
		// The other way round: the old values come back.
		{"demo-diff-offline-reverse", []string{"diff", "--offline", demoNew, demoDir}, 1},
		// Policies of another kind on the shared topology: kinds, entries,
		// sources and whole EffectivePolicies appear and go away.
		{"example1-example2-diff", append(append([]string{"diff", "--offline"}, scenarios...), example1Set, example2Set), 1},
		{"example2-example1-diff-json", append(append([]string{"diff", "--offline", "-o", "json"}, scenarios...), example2Set, example1Set), 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, err := run(t, "", c.args...)
			if got := ExitCode(err); got != c.status || Message(err) != "" {
				t.Fatalf("exit status %d (%v), want %d\nstderr: %s", got, err, c.status, errOut)
			}
			if color := strings.HasSuffix(c.name, "-color"); strings.Contains(out, "\x1b[") != color {
				t.Errorf("color escapes in the output: %v, want %v", !color, color)
			}
			checkGolden(t, c.name, out)
		})
	}
}

// TestDiffOfflineUnchanged: two sets that compute the same effective
// policies exit 0 and print nothing on standard output — also when they
// differ in what no policy reads, or in the order of the files.
func TestDiffOfflineUnchanged(t *testing.T) {
	reordered := t.TempDir()
	for _, f := range []string{"00-crds.yaml", "10-topology.yaml", "20-retry-all.yaml", "30-gateway.yaml", "40-route.yaml"} {
		data, err := os.ReadFile(filepath.Join(demoDir, f))
		if err != nil {
			t.Fatal(err)
		}
		// The policies first: their timestamps differ from OLD's, which a
		// review's rule does not take (each keeps OLD's).
		name := map[string]string{"20-retry-all.yaml": "01.yaml", "30-gateway.yaml": "02.yaml", "40-route.yaml": "03.yaml"}[f]
		if name == "" {
			name = "1" + f
		}
		if err := os.WriteFile(filepath.Join(reordered, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"diff", "--offline", demoDir, demoDir},
		{"diff", "--offline", demoDir, reordered},
		{"diff", "--offline", "-o", "yaml", demoDir, demoDir},
	} {
		out, errOut, err := run(t, "", args...)
		if err != nil {
			t.Fatalf("%v: exit status %d: %v", args, ExitCode(err), err)
		}
		if args[2] == "-o" {
			if !strings.Contains(out, "kind: EffectivePolicyReview") || strings.Contains(out, "changes:") {
				t.Errorf("%v: %s", args, out)
			}
			continue
		}
		if out != "" || errOut != "No effective policy would change.\n" {
			t.Errorf("%v: stdout %q, stderr %q", args, out, errOut)
		}
	}
}

// TestDiffOfflineStdin: OLD or NEW may be standard input.
func TestDiffOfflineStdin(t *testing.T) {
	var all bytes.Buffer
	entries, err := os.ReadDir(demoNew)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(demoNew, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		all.Write(data)
		all.WriteString("\n---\n")
	}
	got, _, err := run(t, all.String(), "diff", "--offline", demoDir, "-")
	if ExitCode(err) != 1 {
		t.Fatalf("exit status %d: %v", ExitCode(err), err)
	}
	want, _, _ := run(t, "", "diff", "--offline", demoDir, demoNew)
	if got != want {
		t.Errorf("from standard input:\n%s\nfrom the files:\n%s", got, want)
	}
}

// reviewCluster is a fake cluster whose EffectivePolicyReviews are answered
// by a real engine (the offline source of the manifests, through the
// server's REST storage of reviews); the reviews it was sent are kept.
type reviewCluster struct {
	off  *offlineSource
	sent []*v1alpha1.EffectivePolicyReview
	// namespace is the kubeconfig's.
	namespace string
	// refuse, when set, is the server's answer to every review.
	refuse error
}

func newReviewCluster(t *testing.T, files ...string) *reviewCluster {
	t.Helper()
	o := &Options{ConfigFlags: genericclioptions.NewConfigFlags(false), Offline: OfflineOptions{Enabled: true, Filenames: files}}
	src, err := newOfflineSource(o)
	if err != nil {
		t.Fatal(err)
	}
	return &reviewCluster{off: src.(*offlineSource), namespace: "default"}
}

// run runs the plugin against the fake cluster.
func (c *reviewCluster) run(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	client := fake.NewSimpleClientset()
	client.PrependReactor("create", "effectivepolicyreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		rv := a.(k8stesting.CreateAction).GetObject().(*v1alpha1.EffectivePolicyReview)
		c.sent = append(c.sent, rv.DeepCopy())
		if c.refuse != nil {
			return true, nil, c.refuse
		}
		answer, err := c.off.Review(t.Context(), rv)
		return true, answer, err
	})
	online := func(o *Options) (Source, error) {
		return &onlineSource{client: client, kinds: c.off.kinds, namespace: func() (string, error) {
			if *o.ConfigFlags.Namespace != "" {
				return *o.ConfigFlags.Namespace, nil
			}
			return c.namespace, nil
		}}, nil
	}
	var out, errOut bytes.Buffer
	cmd := newCommand(genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}, online)
	cmd.SetArgs(args)
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

// TestDiffOnline: diff -f and --delete through the generated clientset,
// answered as the server answers; golden trees, and the same changes as
// diff --offline of the same sets.
func TestDiffOnline(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		status int
	}{
		{"demo-diff-online", []string{"diff", "-f", proposedRetry}, 1},
		{"demo-diff-delete", []string{"diff", "--delete", "timeoutpolicy/baker-timeouts", "-n", "baker"}, 1},
		{"demo-diff-apply-and-delete", []string{"diff", "-f", filepath.Join(demoNew, "40-route.yaml"), "--delete", "retrypolicies.demo.effectivepolicy.dev/retry-all", "-n", "baker"}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := newReviewCluster(t, demoDir)
			out, errOut, err := cl.run(t, "", c.args...)
			if got := ExitCode(err); got != c.status || Message(err) != "" {
				t.Fatalf("exit status %d (%v), want %d\nstderr: %s", got, err, c.status, errOut)
			}
			checkGolden(t, c.name, out)
		})
	}

	// Online equals offline: the proposal against the demo cluster, and
	// the demo against the demo with the proposal in it.
	withProposal := t.TempDir()
	for _, f := range []string{"00-crds.yaml", "10-topology.yaml", "30-gateway.yaml", "40-route.yaml"} {
		copyFile(t, filepath.Join(demoDir, f), filepath.Join(withProposal, f))
	}
	copyFile(t, proposedRetry, filepath.Join(withProposal, "20-retry-all.yaml"))
	for _, format := range []string{"", "json"} {
		online, _, _ := newReviewCluster(t, demoDir).run(t, "", "diff", "-f", proposedRetry, "-o", format)
		offline, _, _ := run(t, "", "diff", "--offline", demoDir, withProposal, "-o", format)
		if format == "json" {
			// The online review holds the proposal in its spec.
			online, offline = statusOf(t, online), statusOf(t, offline)
		}
		if online != offline || online == "" {
			t.Errorf("-o %q online:\n%s\noffline:\n%s", format, online, offline)
		}
	}
}

// statusOf is the status part of a review printed as JSON.
func statusOf(t *testing.T, out string) string {
	t.Helper()
	i := strings.Index(out, `"status"`)
	if i < 0 {
		t.Fatalf("no status in %s", out)
	}
	return out[i:]
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDiffOnlineProposal: what is sent. Namespaced objects without a
// namespace get -n's, else the kubeconfig's; cluster-scoped ones none;
// CRDs and objects no effective policy depends on are skipped with a
// warning; an object in another namespace than an explicit -n is refused.
func TestDiffOnlineProposal(t *testing.T) {
	const manifest = `
apiVersion: demo.effectivepolicy.dev/v1alpha1
kind: RetryPolicy
metadata: {name: retry-all}
spec:
  targetRef: {group: "", kind: Namespace, name: baker}
  defaults: {attempts: 1}
---
apiVersion: v1
kind: Namespace
metadata: {name: baker, namespace: baker, labels: {team: baker}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: baker, namespace: baker}
`
	cases := []struct {
		name       string
		kubeconfig string
		args       []string
		want       []string // kind/namespace/name sent
	}{
		{"-n", "default", []string{"-n", "baker"}, []string{"RetryPolicy/baker/retry-all", "Namespace//baker"}},
		{"the kubeconfig's namespace", "baker", nil, []string{"RetryPolicy/baker/retry-all", "Namespace//baker"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := newReviewCluster(t, demoDir)
			cl.namespace = c.kubeconfig
			_, errOut, err := cl.run(t, manifest, append([]string{"diff", "-f", "-"}, c.args...)...)
			if ExitCode(err) != 1 {
				t.Fatalf("exit status %d: %v\n%s", ExitCode(err), err, errOut)
			}
			if len(cl.sent) != 1 {
				t.Fatalf("%d reviews sent", len(cl.sent))
			}
			var got []string
			for _, raw := range cl.sent[0].Spec.Apply {
				u := &unstructured.Unstructured{}
				if err := u.UnmarshalJSON(raw.Raw); err != nil {
					t.Fatal(err)
				}
				got = append(got, u.GetKind()+"/"+u.GetNamespace()+"/"+u.GetName())
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("sent %v, want %v", got, c.want)
			}
			if want := "Warning: skipped ConfigMap settings, Deployment baker/baker: no effective policy depends on them"; !strings.Contains(errOut, want) {
				t.Errorf("stderr %q, want %q", errOut, want)
			}
		})
	}

	// The demo's own manifests against the demo cluster: nothing changes
	// (each object keeps its creationTimestamp); its CRDs and its
	// RequestTrace are skipped, with warnings.
	cl := newReviewCluster(t, demoDir)
	out, errOut, err := cl.run(t, "", "diff", "-f", demoDir)
	if err != nil || out != "" {
		t.Errorf("the demo against itself: exit status %d (%v), stdout %q", ExitCode(err), err, out)
	}
	for _, want := range []string{
		"Warning: skipped CustomResourceDefinition retrypolicies.demo.effectivepolicy.dev, CustomResourceDefinition timeoutpolicies.demo.effectivepolicy.dev: a review cannot add or change a policy kind",
		"Warning: skipped RoleBinding baker/ana-view, RequestTrace: no effective policy depends on them",
		"No effective policy would change.",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q, want %q", errOut, want)
		}
	}
}

// TestDiffErrors: what diff refuses, with exit status 2 (1 means a change).
func TestDiffErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"nothing to review", []string{"diff"}, "nothing to review"},
		{"arguments online", []string{"diff", demoDir}, "to compare two sets of manifests: diff --offline OLD NEW"},
		{"one set offline", []string{"diff", "--offline", demoDir}, "give OLD and NEW"},
		{"--delete offline", []string{"diff", "--offline", demoDir, demoNew, "--delete", "retrypolicy/retry-all"}, "--delete is for a review against the cluster"},
		{"stdin twice", []string{"diff", "--offline", "-", "-"}, "standard input (-) can be read once"},
		{"a bad flag", []string{"diff", "--nope"}, "unknown flag: --nope"},
		{"a bad output", []string{"diff", "--offline", demoDir, demoNew, "-o", "wide"}, "--output must be yaml, json or empty"},
		{"missing manifests", []string{"diff", "--offline", demoDir, "testdata/nope"}, "testdata/nope: no such file or directory"},
		{"--delete without a name", []string{"diff", "--delete", "retrypolicy"}, `--delete "retrypolicy": want KIND/NAME`},
		{"--delete of an unknown kind", []string{"diff", "--delete", "widget/w"}, `--delete widget/w: unknown kind "widget"`},
		{"another namespace than -n", []string{"diff", "-f", proposedRetry, "-n", "infra"}, `the namespace from the provided object "baker" does not match the namespace "infra"`},
		{"a kind the server does not model", []string{"diff", "-f", "-"}, "neither a policy kind nor part of the Gateway API hierarchy"},
		{"only what a review cannot take", []string{"diff", "-f", filepath.Join(demoDir, "00-crds.yaml")}, "nothing to review: the manifests hold nothing a review can take"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdin := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: baker}\n"
			_, _, err := newReviewCluster(t, demoDir).run(t, stdin, c.args...)
			if ExitCode(err) != 2 || !strings.Contains(Message(err), c.want) {
				t.Errorf("exit status %d, error %v; want 2 and an error saying %q", ExitCode(err), err, c.want)
			}
		})
	}

	// A kind that names two (ColorPolicy of two groups) must be qualified.
	cl := newReviewCluster(t, "../../../test/scenarios/crds", "../../../test/scenarios/topology.yaml", example1Set)
	_, _, err := cl.run(t, "", "diff", "--delete", "colorpolicy/p1", "-n", "colors")
	if want := "give it with its group (colorpolicies."; ExitCode(err) != 2 || !strings.Contains(Message(err), want) {
		t.Errorf("an ambiguous kind: exit status %d, %v; want 2 and %q", ExitCode(err), err, want)
	}
	_, _, err = cl.run(t, "", "diff", "--delete", "colorpolicies.direct.colors.example.com/p1", "-n", "colors")
	if ExitCode(err) != 1 {
		t.Errorf("a qualified kind: exit status %d, %v", ExitCode(err), err)
	}

	// A caller who may not create reviews is told which binding grants the right.
	cl.refuse = apierrors.NewForbidden(v1alpha1.Resource("effectivepolicyreviews"), "", errors.New("no"))
	_, _, err = cl.run(t, "", "diff", "-f", example2Set)
	if want := "ClusterRoleBinding effectivepolicy.dev:review-changes"; ExitCode(err) != 2 || !strings.Contains(Message(err), want) {
		t.Errorf("forbidden: exit status %d, %v; want 2 and %q", ExitCode(err), err, want)
	}
}

// TestExitCode: the statuses main exits with, and what it prints.
func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		msg    string
	}{
		{nil, 0, ""},
		{os.ErrNotExist, 1, "file does not exist"},
		{&ExitError{Code: 1}, 1, ""},
		{&ExitError{Code: 2, Err: os.ErrNotExist}, 2, "file does not exist"},
	} {
		if got, msg := ExitCode(c.err), Message(c.err); got != c.status || msg != c.msg {
			t.Errorf("%v: %d %q, want %d %q", c.err, got, msg, c.status, c.msg)
		}
	}
}
