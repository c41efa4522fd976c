package differential

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"

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

// schemas are the structural schemas of Envoy Gateway's policy CRDs by kind,
// read once from the Go module through test/upstream/envoygateway/crds.sh.
type schemas struct {
	crds []*unstructured.Unstructured
	byGK map[string]*structuralschema.Structural
}

var (
	egSchemasOnce sync.Once
	egSchemas     *schemas
	egSchemasErr  error
)

// EnvoyGatewayCRDs returns Envoy Gateway v1.9.0's policy CRDs and their schemas.
func envoyGatewayCRDs() (*schemas, error) {
	egSchemasOnce.Do(func() {
		cmd := exec.Command("bash", filepath.Join(RepoRoot(), "test", "upstream", "envoygateway", "crds.sh"))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			egSchemasErr = fmt.Errorf("crds.sh: %w", err)
			return
		}
		objs, err := ParseYAML(out)
		if err != nil {
			egSchemasErr = err
			return
		}
		egSchemas, egSchemasErr = buildSchemas(objs)
	})
	return egSchemas, egSchemasErr
}

func buildSchemas(objs []*unstructured.Unstructured) (*schemas, error) {
	s := &schemas{crds: objs, byGK: map[string]*structuralschema.Structural{}}
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

// defaulted returns a copy of objs in which every object of a known CRD is
// pruned and defaulted as kube-apiserver stores it.
func (s *schemas) defaulted(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
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
