package differential

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	apiextinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/yamldocs"
)

// RepoRoot is the repository's root, found from this file's place in it.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// YAML writes objs as one multi-document YAML stream.
func YAML(objs []*unstructured.Unstructured) ([]byte, error) {
	var b bytes.Buffer
	for i, o := range objs {
		if i > 0 {
			b.WriteString("---\n")
		}
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
		b.Write(y)
	}
	return b.Bytes(), nil
}

// ParseYAML reads a multi-document YAML stream.
func ParseYAML(data []byte) ([]*unstructured.Unstructured, error) { return yamldocs.Parse(data) }

// RuleName is the name of rule i of the route of kind at ns/name ("" when
// it has none, or there is no such rule).
func RuleName(objs []*unstructured.Unstructured, kind, ns, name string, i int) string {
	for _, o := range objs {
		if o.GetKind() != kind || o.GetNamespace() != ns || o.GetName() != name {
			continue
		}
		rules, _, _ := unstructured.NestedSlice(o.Object, "spec", "rules")
		if i < len(rules) {
			if m, ok := rules[i].(map[string]any); ok {
				n, _ := m["name"].(string)
				return n
			}
		}
	}
	return ""
}

// Schemas are an implementation's policy CRDs and their structural schemas
// by group, version and kind: what kube-apiserver prunes and defaults the
// policies with, so that our engine reads them as a cluster stores them.
type Schemas struct {
	CRDs []*unstructured.Unstructured
	byGK map[string]*structuralschema.Structural
}

// LoadCRDs runs script (a crds.sh under test/upstream, relative to the
// repository's root, which prints an implementation's CRDs from the Go
// module proxy) and builds their schemas.
func LoadCRDs(script string) (*Schemas, error) {
	cmd := exec.Command("bash", filepath.Join(RepoRoot(), script))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", script, err)
	}
	objs, err := ParseYAML(out)
	if err != nil {
		return nil, err
	}
	return BuildSchemas(objs)
}

// BuildSchemas reads the storage version's schema of every CRD of objs.
func BuildSchemas(objs []*unstructured.Unstructured) (*Schemas, error) {
	s := &Schemas{CRDs: objs, byGK: map[string]*structuralschema.Structural{}}
	for _, u := range objs {
		crd := &apiextv1.CustomResourceDefinition{}
		if err := kruntime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
			return nil, err
		}
		for _, v := range crd.Spec.Versions {
			if !v.Storage || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			internal := &apiextinternal.JSONSchemaProps{}
			if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
				return nil, err
			}
			st, err := structuralschema.NewStructural(internal)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", crd.Name, err)
			}
			s.byGK[crd.Spec.Group+"/"+v.Name+"/"+crd.Spec.Names.Kind] = st
		}
	}
	return s, nil
}

// Defaulted returns a copy of objs in which every object of a known CRD is
// pruned and defaulted as kube-apiserver stores it.
func (s *Schemas) Defaulted(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o
		if st, ok := s.byGK[o.GetAPIVersion()+"/"+o.GetKind()]; ok {
			c := o.DeepCopy()
			pruning.Prune(c.Object, st, true)
			defaulting.Default(c.Object, st)
			out[i] = c
		}
	}
	return out
}

// Schema is the structural schema of the CRD of apiVersion and kind, or nil.
func (s *Schemas) Schema(apiVersion, kind string) *structuralschema.Structural {
	return s.byGK[apiVersion+"/"+kind]
}

// Stored is what our engine reads for objs: the CRDs, then objs as
// kube-apiserver stores them (Defaulted).
func (s *Schemas) Stored(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	return append(append([]*unstructured.Unstructured(nil), s.CRDs...), s.Defaulted(objs)...)
}
