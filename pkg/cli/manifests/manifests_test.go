package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ids(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
	}
	return out
}

func svc(name string) string {
	return "apiVersion: v1\nkind: Service\nmetadata: {name: " + name + "}\n"
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "20-b.yaml", svc("b")+"---\n# only a comment\n---\n"+svc("c"))
	write(t, dir, "10-a.yml", svc("a"))
	write(t, dir, "30-list.json", `{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "d"}}]}`)
	write(t, dir, "README.md", "not a manifest")
	write(t, dir, "sub/40-e.yaml", svc("e"))
	cases := []struct {
		name string
		o    Options
		want []string
	}{
		{"a directory, in lexical order, Lists expanded", Options{Filenames: []string{dir}}, []string{"Service//a", "Service//b", "Service//c", "Service//d"}},
		{"recursive", Options{Filenames: []string{dir}, Recursive: true}, []string{"Service//a", "Service//b", "Service//c", "Service//d", "Service//e"}},
		{"files in the order given", Options{Filenames: []string{filepath.Join(dir, "sub/40-e.yaml"), filepath.Join(dir, "10-a.yml")}}, []string{"Service//e", "Service//a"}},
		{"standard input", Options{Filenames: []string{"-", filepath.Join(dir, "10-a.yml")}, Stdin: strings.NewReader(svc("in"))}, []string{"Service//in", "Service//a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs, err := Read(c.o)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(objs); !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "bad.yaml", "metadata: {name: x}\n")
	write(t, dir, "broken.yaml", "a: [\n")
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{}, "no manifests"},
		{Options{Filenames: []string{filepath.Join(dir, "bad.yaml")}}, "document 0 has no apiVersion or kind"},
		{Options{Filenames: []string{filepath.Join(dir, "broken.yaml")}}, "broken.yaml"},
		{Options{Filenames: []string{filepath.Join(dir, "missing")}}, "no such file"},
		{Options{Filenames: []string{"-"}}, "no standard input"},
	} {
		if _, err := Read(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Read(%v): %v, want an error saying %q", c.o.Filenames, err, c.want)
		}
	}
}

func TestComplete(t *testing.T) {
	objs, err := Read(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(`
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: first}
---
apiVersion: v1
kind: Namespace
metadata: {name: infra}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gc}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra, creationTimestamp: "2024-05-01T10:00:00Z"}
---
apiVersion: example.com/v1
kind: ClusterRetryPolicy
metadata: {name: everywhere}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
`)})
	if err != nil {
		t.Fatal(err)
	}
	clusterRetry := func(gk schema.GroupKind) (bool, bool) {
		if gk.Kind == "ClusterRetryPolicy" {
			return false, true
		}
		return false, false
	}
	got := Complete(objs, Scope{Namespace: "app", Namespaced: clusterRetry})
	want := []string{
		// Implicit Namespaces first, in the order the objects name them.
		"Namespace//app 2024-05-01T10:00:01Z", "Namespace//shop 2024-05-01T10:00:02Z",
		"RetryPolicy/app/first 2024-05-01T10:00:03Z",
		"Namespace//infra 2024-05-01T10:00:04Z",
		"GatewayClass//gc 2024-05-01T10:00:05Z",
		"Gateway/infra/gw 2024-05-01T10:00:00Z", // kept
		"ClusterRetryPolicy//everywhere 2024-05-01T10:00:06Z",
		"Service/shop/web 2024-05-01T10:00:07Z",
	}
	var have []string
	for i, id := range ids(got) {
		have = append(have, id+" "+got[i].GetCreationTimestamp().UTC().Format(time.RFC3339))
	}
	if !slices.Equal(have, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(have, "\n"), strings.Join(want, "\n"))
	}
}

func TestCompleteWithoutTimestamps(t *testing.T) {
	objs, err := Read(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(svc("a") + "---\n" + svc("b"))})
	if err != nil {
		t.Fatal(err)
	}
	got := Complete(objs, Scope{})
	if ids := ids(got); !slices.Equal(ids, []string{"Namespace//default", "Service/default/a", "Service/default/b"}) {
		t.Fatalf("got %v", ids)
	}
	for i, o := range got {
		if ts := o.GetCreationTimestamp().Time; !ts.Equal(Epoch.Add(time.Duration(i) * time.Second)) {
			t.Errorf("%s: creationTimestamp %s", o.GetName(), ts)
		}
	}
}

// TestCompleteAfter: a set proposed over another is stamped by the review
// rule: what the old set holds keeps its timestamp (whatever the new set
// says), the rest is new, all at one instant after the newest old object.
func TestCompleteAfter(t *testing.T) {
	old, err := Read(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(`
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: kept, namespace: app}
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: gone, namespace: app}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: app, creationTimestamp: "2024-05-01T10:00:00Z"}
`)})
	if err != nil {
		t.Fatal(err)
	}
	base := Complete(old, Scope{})
	proposed, err := Read(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(`
apiVersion: example.com/v2
kind: RetryPolicy
metadata: {name: new, namespace: app, creationTimestamp: "1999-01-01T00:00:00Z"}
---
apiVersion: example.com/v2
kind: RetryPolicy
metadata: {name: kept}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: app, creationTimestamp: "2030-01-01T00:00:00Z"}
`)})
	if err != nil {
		t.Fatal(err)
	}
	got := CompleteAfter(proposed, base, Scope{Namespace: "app"})
	want := []string{
		"Namespace//shop 2024-05-01T10:00:04Z", // new, implicit
		"RetryPolicy/app/new 2024-05-01T10:00:04Z",
		"RetryPolicy/app/kept 2024-05-01T10:00:02Z", // another version of the same kind: the same object
		"Service/shop/web 2024-05-01T10:00:04Z",
		"Service/app/web 2024-05-01T10:00:00Z",
	}
	// Namespace app is implicit in both: it keeps its timestamp too.
	want = append([]string{"Namespace//app 2024-05-01T10:00:01Z"}, want...)
	var have []string
	for i, id := range ids(got) {
		have = append(have, id+" "+got[i].GetCreationTimestamp().UTC().Format(time.RFC3339))
	}
	if !slices.Equal(have, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(have, "\n"), strings.Join(want, "\n"))
	}
}

// TestSetNamespaces: kubectl apply's rule, and no namespace on a
// cluster-scoped object.
func TestSetNamespaces(t *testing.T) {
	objs, err := Read(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(`
apiVersion: v1
kind: Service
metadata: {name: a}
---
apiVersion: v1
kind: Service
metadata: {name: b, namespace: other}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gc, namespace: stray}
`)})
	if err != nil {
		t.Fatal(err)
	}
	SetNamespaces(objs, Scope{Namespace: "app"})
	if got := ids(objs); !slices.Equal(got, []string{"Service/app/a", "Service/other/b", "GatewayClass//gc"}) {
		t.Errorf("got %v", got)
	}
}
