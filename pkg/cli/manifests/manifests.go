// Package manifests reads the YAML and JSON manifests the plugin's offline
// mode is given (-f FILE, -f DIR, -f - for standard input), as kubectl
// apply -f reads them, and makes them what a cluster would hold: every
// namespaced object in a namespace, every namespace existing, and every
// object with a creationTimestamp.
//
// Timestamps decide precedence (docs/spec.md §5: the older policy is established),
// so they must not depend on the clock: an object without one is stamped
// one second after the object before it, in file order, starting one
// second after the newest timestamp the manifests carry (2000-01-01T00:00:00Z
// when none does). That is what applying the manifests one by one, in
// order, after the objects that already exist would give.
//
// A set proposed to replace another (kubectl effectivepolicy diff --offline
// OLD NEW) is stamped by the rule of an EffectivePolicyReview instead
// (CompleteAfter): what OLD holds keeps OLD's timestamp, the rest is newer
// than all of OLD.
package manifests

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/yamldocs"
)

// Epoch is the first timestamp given when no manifest has one.
var Epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// extensions are the files a directory contributes (kubectl's).
var extensions = []string{".yaml", ".yml", ".json"}

// Options say where the manifests are.
type Options struct {
	// Filenames are files, directories, or "-" for Stdin, in order.
	Filenames []string
	// Recursive descends into subdirectories (kubectl's -R).
	Recursive bool
	// Stdin is read for "-".
	Stdin io.Reader
}

// Read reads every manifest in order. Documents of kind List are expanded
// into their items.
func Read(o Options) ([]*unstructured.Unstructured, error) {
	files, err := Files(o)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		got, err := Parse(f.Name, f.Data)
		if err != nil {
			return nil, err
		}
		objs = append(objs, got...)
	}
	return objs, nil
}

// File is one file of manifests, read.
type File struct {
	// Name is the file's path, or "standard input".
	Name string
	Data []byte
}

// Files reads the files o names, in order: directories contribute their
// .yaml, .yml and .json files in lexical order (recursively with
// o.Recursive), "-" standard input.
func Files(o Options) ([]File, error) {
	if len(o.Filenames) == 0 {
		return nil, fmt.Errorf("no manifests: give -f FILE, -f DIR or -f -")
	}
	var files []File
	for _, name := range o.Filenames {
		got, err := readOne(name, o)
		if err != nil {
			return nil, err
		}
		files = append(files, got...)
	}
	return files, nil
}

func readOne(name string, o Options) ([]File, error) {
	if name == "-" {
		if o.Stdin == nil {
			return nil, fmt.Errorf("-f -: no standard input")
		}
		data, err := io.ReadAll(o.Stdin)
		if err != nil {
			return nil, fmt.Errorf("reading standard input: %w", err)
		}
		return []File{{Name: "standard input", Data: data}}, nil
	}
	info, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	names := []string{name}
	if info.IsDir() {
		if names, err = dirFiles(name, o.Recursive); err != nil {
			return nil, err
		}
	}
	files := make([]File, 0, len(names))
	for _, f := range names {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: f, Data: data})
	}
	return files, nil
}

// dirFiles lists a directory's manifests in lexical order (filepath.WalkDir's).
func dirFiles(dir string, recursive bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if slices.Contains(extensions, strings.ToLower(filepath.Ext(path))) {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}

// Parse reads the manifests of data, read from source (named in errors).
// Documents of kind List are expanded into their items.
func Parse(source string, data []byte) ([]*unstructured.Unstructured, error) {
	return parse(source, data)
}

func parse(source string, data []byte) ([]*unstructured.Unstructured, error) {
	docs, err := yamldocs.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	var objs []*unstructured.Unstructured
	for i, d := range docs {
		if d.GetKind() == "" || d.GetAPIVersion() == "" {
			return nil, fmt.Errorf("%s: document %d has no apiVersion or kind", source, i)
		}
		if !d.IsList() {
			objs = append(objs, d)
			continue
		}
		list, err := d.ToList()
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", source, i, err)
		}
		for j := range list.Items {
			objs = append(objs, &list.Items[j])
		}
	}
	return objs, nil
}

// Scope decides which objects are namespaced.
type Scope struct {
	// Namespace is given to namespaced objects that name none ("default"
	// when empty).
	Namespace string
	// Namespaced reports whether a kind is namespaced (the kinds of the
	// manifests' CRDs, say); ok=false when it does not know the kind,
	// which is then namespaced unless it is one of the well-known
	// cluster-scoped kinds.
	Namespaced func(gk schema.GroupKind) (namespaced, ok bool)
}

// clusterKinds are kinds known to be cluster-scoped without a cluster to ask.
var clusterKinds = map[schema.GroupKind]bool{
	{Kind: "Namespace"}: true, {Kind: "Node"}: true, {Kind: "PersistentVolume"}: true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:               true,
	{Group: "gateway.networking.k8s.io", Kind: "GatewayClass"}:                      true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                       true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                 true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                             true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                           true,
}

// IsNamespaced reports whether u's kind is namespaced.
func (s Scope) IsNamespaced(u *unstructured.Unstructured) bool {
	gk := u.GroupVersionKind().GroupKind()
	if s.Namespaced != nil {
		if ns, ok := s.Namespaced(gk); ok {
			return ns
		}
	}
	return !clusterKinds[gk]
}

// Complete makes objs what a cluster would hold: it gives namespaced
// objects without a namespace s.Namespace, adds the Namespaces the objects
// live in that objs do not define (first: they existed before anything in
// them), and stamps creationTimestamps (see the package comment). It
// changes the objects in place and returns them with the added Namespaces.
func Complete(objs []*unstructured.Unstructured, s Scope) []*unstructured.Unstructured {
	SetNamespaces(objs, s)
	newest := time.Time{}
	for _, u := range objs {
		if t := u.GetCreationTimestamp().Time; t.After(newest) {
			newest = t
		}
	}
	next := Epoch
	if !newest.IsZero() {
		next = newest.Add(time.Second)
	}
	all := append(implicitNamespaces(objs), objs...)
	for _, u := range all {
		if u.GetCreationTimestamp().Time.IsZero() {
			u.SetCreationTimestamp(metav1.NewTime(next))
			next = next.Add(time.Second)
		}
	}
	return all
}

// CompleteAfter makes objs, a set proposed to replace base (a set
// Complete returned), what the cluster would hold once objs were applied
// over base, by the rule of an EffectivePolicyReview (docs/spec.md §10): an
// object base holds too keeps base's creationTimestamp, as a real apply
// would, whatever objs say; every other one is new and the newest of all,
// one second after the newest object of base, all at that same instant
// (a review stamps its new objects with one "now"). Namespaces and the
// Namespaces objects live in are completed as Complete does. It changes the
// objects in place and returns them with the added Namespaces.
func CompleteAfter(objs, base []*unstructured.Unstructured, s Scope) []*unstructured.Unstructured {
	SetNamespaces(objs, s)
	existing := make(map[Key]metav1.Time, len(base))
	newest := time.Time{}
	for _, u := range base {
		ts := u.GetCreationTimestamp()
		existing[KeyOf(u)] = ts
		if ts.After(newest) {
			newest = ts.Time
		}
	}
	now := Epoch
	if !newest.IsZero() {
		now = newest.Add(time.Second)
	}
	all := append(implicitNamespaces(objs), objs...)
	for _, u := range all {
		if ts, ok := existing[KeyOf(u)]; ok {
			u.SetCreationTimestamp(ts)
		} else {
			u.SetCreationTimestamp(metav1.NewTime(now))
		}
	}
	return all
}

// Key names an object whatever the version of its kind.
type Key struct {
	Group, Kind, Namespace, Name string
}

// KeyOf returns u's key.
func KeyOf(u *unstructured.Unstructured) Key {
	gk := u.GroupVersionKind().GroupKind()
	return Key{Group: gk.Group, Kind: gk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// SetNamespaces gives namespaced objects without a namespace s.Namespace
// (kubectl apply's rule) and takes the namespace off objects of kinds
// known to be cluster-scoped, which a cluster ignores. It changes the
// objects in place.
func SetNamespaces(objs []*unstructured.Unstructured, s Scope) {
	ns := s.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	for _, u := range objs {
		switch {
		case !s.IsNamespaced(u):
			u.SetNamespace("")
		case u.GetNamespace() == "":
			u.SetNamespace(ns)
		}
	}
}

// implicitNamespaces returns the Namespaces objs live in that objs do not
// define, in the order the objects name them.
func implicitNamespaces(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	defined := map[string]bool{}
	for _, u := range objs {
		if u.GetAPIVersion() == "v1" && u.GetKind() == "Namespace" {
			defined[u.GetName()] = true
		}
	}
	var implicit []*unstructured.Unstructured
	for _, u := range objs {
		if n := u.GetNamespace(); n != "" && !defined[n] {
			defined[n] = true
			ns := &unstructured.Unstructured{}
			ns.SetAPIVersion("v1")
			ns.SetKind("Namespace")
			ns.SetName(n)
			implicit = append(implicit, ns)
		}
	}
	return implicit
}
