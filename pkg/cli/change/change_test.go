package change

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/kinds"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/manifests"
)

const (
	route   = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\n"
	class   = "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: c, namespace: stray}\n"
	deploy  = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"
	crd     = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: retrypolicies.example.com}\nspec: {group: example.com, scope: Namespaced, names: {kind: RetryPolicy, plural: retrypolicies}}\n"
	other   = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: frosting}\n"
	service = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n"
)

func parse(t *testing.T, docs ...string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := manifests.Parse("test", []byte(strings.Join(docs, "---\n")))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestApply: what a review takes, where, and what it skips (the rules
// diff had; its tests in cmd/kubectl-effectivepolicy/app/diff_test.go run
// them end to end).
func TestApply(t *testing.T) {
	cases := []struct {
		name     string
		docs     []string
		explicit bool
		want     []string // kind namespace/name sent
		warnings int
		err      string
	}{
		{name: "namespaced objects get the namespace", docs: []string{route, service}, want: []string{"HTTPRoute baker/r", "Service baker/s"}},
		{name: "a cluster-scoped kind loses a namespace", docs: []string{class}, want: []string{"GatewayClass c"}},
		{name: "CRDs and Deployments skipped", docs: []string{crd, deploy, route}, want: []string{"HTTPRoute baker/r"}, warnings: 2},
		{name: "another namespace, not asked for", docs: []string{other}, want: []string{"HTTPRoute frosting/r"}},
		{name: "another namespace than -n", docs: []string{other}, explicit: true, err: `the namespace from the provided object "frosting" does not match the namespace "baker"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, skipped, err := Apply(parse(t, tc.docs...), ApplyOptions{Namespace: "baker", Explicit: tc.explicit})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range raw {
				u := &unstructured.Unstructured{}
				if err := json.Unmarshal(r.Raw, &u.Object); err != nil {
					t.Fatal(err)
				}
				got = append(got, u.GetKind()+" "+qualified(u.GetNamespace(), u.GetName()))
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("sent %v, want %v", got, tc.want)
			}
			if w := skipped.Warnings(); len(w) != tc.warnings {
				t.Errorf("warnings %q, want %d", w, tc.warnings)
			}
		})
	}
}

func TestRef(t *testing.T) {
	cases := []struct {
		arg  string
		want v1alpha1.ReviewObjectReference
		err  string
	}{
		{arg: "httproute/r", want: v1alpha1.ReviewObjectReference{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "baker", Name: "r"}},
		{arg: "gatewayclass/c", want: v1alpha1.ReviewObjectReference{Group: "gateway.networking.k8s.io", Kind: "GatewayClass", Name: "c"}},
		{arg: "httproute", err: `delete "httproute": want KIND/NAME`},
		{arg: "httproute/a/b", err: "want KIND/NAME"},
		{arg: "/r", err: "want KIND/NAME"},
		{arg: "nosuchkind/r", err: "delete nosuchkind/r: "},
	}
	for _, tc := range cases {
		t.Run(tc.arg, func(t *testing.T) {
			got, err := Ref(kinds.NewTable(), "baker", "delete", tc.arg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestRefsOf(t *testing.T) {
	got, err := RefsOf(parse(t, route, class, other), nil, "baker")
	if err != nil {
		t.Fatal(err)
	}
	want := []v1alpha1.ReviewObjectReference{
		{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "baker", Name: "r"},
		{Group: "gateway.networking.k8s.io", Kind: "GatewayClass", Name: "c"},
		{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "frosting", Name: "r"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("ref %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if _, err := RefsOf(parse(t, "apiVersion: v1\nkind: Service\nmetadata: {namespace: x}\n"), nil, "baker"); err == nil || !strings.Contains(err.Error(), "has no name") {
		t.Errorf("no name: error %v", err)
	}
}

// TestSets: the shared manifests are in both sets (copies: completing one
// does not stamp the other), and NEW keeps OLD's timestamps for what OLD
// holds, the rest newer than all of OLD.
func TestSets(t *testing.T) {
	shared := parse(t, class)
	before, after, err := Sets(shared, Set{Name: "old", Objects: parse(t, route)}, Set{Name: "new", Objects: parse(t, route, service)}, "baker")
	if err != nil {
		t.Fatal(err)
	}
	stamps := func(objs []*unstructured.Unstructured) map[string]string {
		m := map[string]string{}
		for _, u := range objs {
			m[u.GetKind()+" "+qualified(u.GetNamespace(), u.GetName())] = u.GetCreationTimestamp().UTC().Format("15:04:05")
		}
		return m
	}
	b, a := stamps(before), stamps(after)
	for _, k := range []string{"Namespace baker", "GatewayClass c", "HTTPRoute baker/r"} {
		if b[k] == "" || a[k] != b[k] {
			t.Errorf("%s: before %q, after %q: want the same stamp", k, b[k], a[k])
		}
	}
	if s := a["Service baker/s"]; s <= b["HTTPRoute baker/r"] {
		t.Errorf("the new Service is stamped %q, not after OLD's newest %q", s, b["HTTPRoute baker/r"])
	}
	if !shared[0].GetCreationTimestamp().Time.IsZero() {
		t.Error("the shared manifests were stamped in place")
	}
	if _, _, err := Sets(nil, Set{Name: "old", Objects: parse(t, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\nspec: {scope: [1]}\n")}, Set{Name: "new"}, "baker"); err == nil || !strings.HasPrefix(err.Error(), "old: ") {
		t.Errorf("a bad CRD in OLD: error %v, want it named old", err)
	}
}
