package scale

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// gatewayAPIVersion is the release hack/local-up.sh installs.
const gatewayAPIVersion = "v1.6.3"

// TestGatewayAPIObjectsAreValid validates the generated GatewayClass,
// Gateways and HTTPRoutes against the upstream standard CRDs (OpenAPI schema
// and CEL rules, after defaulting, as kube-apiserver does on create). The CRDs
// come from the sigs.k8s.io/gateway-api module at the release
// hack/local-up.sh installs, fetched through the Go module proxy (or from
// GATEWAY_API_CRDS naming a config/crd/standard directory).
func TestGatewayAPIObjectsAreValid(t *testing.T) {
	vals := gatewayAPIValidators(t, gatewayAPICRDDir(t))
	bad, n := 0, 0
	for _, u := range Generate(Options{Scale: 0.02, Seed: 1}) {
		v, ok := vals[u.GetKind()]
		if !ok {
			continue
		}
		n++
		structuraldefaulting.Default(u.Object, v.st)
		errs := apivalidation.ValidateCustomResource(nil, u.Object, v.sv)
		ce, _ := v.cel.Validate(context.Background(), field.NewPath(""), v.st, u.Object, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, ce...)
		if len(errs) > 0 && bad < 10 {
			t.Errorf("%s %s/%s: %s", u.GetKind(), u.GetNamespace(), u.GetName(), strings.TrimSpace(errs.ToAggregate().Error()))
			bad++
		}
	}
	if n == 0 {
		t.Error("nothing validated")
	}
}

// gatewayAPICRDDir is GATEWAY_API_CRDS, or else the config/crd/standard
// directory of the sigs.k8s.io/gateway-api module at gatewayAPIVersion.
func gatewayAPICRDDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("GATEWAY_API_CRDS")
	if dir == "" {
		out, err := exec.Command("go", "mod", "download", "-json", "sigs.k8s.io/gateway-api@"+gatewayAPIVersion).Output()
		if err != nil {
			t.Fatalf("go mod download sigs.k8s.io/gateway-api@%s: %v", gatewayAPIVersion, err)
		}
		var mod struct{ Dir, Error string }
		if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
			t.Fatalf("go mod download: no module directory (%v %s)", err, mod.Error)
		}
		dir = filepath.Join(mod.Dir, "config", "crd", "standard")
	}
	return dir
}

// crdValidator validates objects of one kind against its CRD's v1 schema.
type crdValidator struct {
	sv  apivalidation.SchemaValidator
	cel *cel.Validator
	st  *structuralschema.Structural
}

// gatewayAPIValidators reads the GatewayClass, Gateway and HTTPRoute CRDs
// from dir: the validators of their v1 schemas, by kind.
func gatewayAPIValidators(t *testing.T, dir string) map[string]crdValidator {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = apiextv1.AddToScheme(scheme)
	_ = apiextensions.AddToScheme(scheme)
	vals := map[string]crdValidator{}
	for _, f := range []string{"gatewayclasses", "gateways", "httproutes"} {
		data, err := os.ReadFile(filepath.Join(dir, "gateway.networking.k8s.io_"+f+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var v1 apiextv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &v1); err != nil {
			t.Fatal(err)
		}
		apiextv1.SetObjectDefaults_CustomResourceDefinition(&v1)
		var in apiextensions.CustomResourceDefinition
		if err := scheme.Convert(&v1, &in, nil); err != nil {
			t.Fatal(err)
		}
		for _, v := range in.Spec.Versions {
			if v.Name != "v1" {
				continue
			}
			sch := in.Spec.Validation
			if v.Schema != nil {
				sch = v.Schema
			}
			sv, _, err := apivalidation.NewSchemaValidator(sch.OpenAPIV3Schema)
			if err != nil {
				t.Fatal(err)
			}
			st, err := structuralschema.NewStructural(sch.OpenAPIV3Schema)
			if err != nil {
				t.Fatal(err)
			}
			vals[in.Spec.Names.Kind] = crdValidator{sv, cel.NewValidator(st, true, celconfig.PerCallLimit), st}
		}
	}
	if len(vals) != 3 {
		t.Fatalf("found the v1 schema of %d of 3 kinds", len(vals))
	}
	return vals
}
