package envoygateway

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// envoyGateway judges with Envoy Gateway v1.9.0's translator, run as
// `egctl x translate --from gateway-api --to gateway-api,ir -o json -f -`:
// the xdsIR's per-route traffic, security and extension settings and per
// listener client settings, and every policy's status per ancestor.
type envoyGateway struct{}

func init() { differential.Register(envoyGateway{}) }

func (envoyGateway) Name() string { return "envoygateway" }

// Features: egctl's loader (internal/gatewayapi/resource/load.go) reads no
// ListenerSet and keeps only the name and namespace of each object's
// metadata, so labels (and with them targetSelectors) never match.
func (envoyGateway) Features() gen.Features { return gen.Features{} }

var (
	egctlOnce sync.Once
	egctlPath string
	egctlErr  error
)

// Command builds egctl once (hack/egctl.sh caches it like golangci-lint);
// $EGCTL names a binary instead.
func (envoyGateway) Command() ([]string, error) {
	egctlOnce.Do(func() {
		if p := os.Getenv("EGCTL"); p != "" {
			egctlPath = p
			return
		}
		cmd := exec.Command("bash", filepath.Join(differential.RepoRoot(), "hack", "egctl.sh"))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			egctlErr = fmt.Errorf("hack/egctl.sh: %w", err)
			return
		}
		egctlPath = strings.TrimSpace(string(out))
	})
	if egctlErr != nil {
		return nil, egctlErr
	}
	return []string{egctlPath, "x", "translate", "--from", "gateway-api", "--to", "gateway-api,ir", "-o", "json", "-f", "-"}, nil
}

// Input: egctl applies the CRDs' defaults itself.
func (envoyGateway) Input(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return objs, nil
}

// Ours adds the policy CRDs and their defaults, as kube-apiserver would.
func (envoyGateway) Ours(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	s, err := envoyGatewayCRDs()
	if err != nil {
		return nil, err
	}
	return s.Stored(objs), nil
}

var (
	egSchemasOnce sync.Once
	egSchemas     *differential.Schemas
	egSchemasErr  error
)

// envoyGatewayCRDs returns Envoy Gateway v1.9.0's policy CRDs and their
// schemas, from test/upstream/envoygateway/crds.sh (the Go module proxy).
func envoyGatewayCRDs() (*differential.Schemas, error) {
	egSchemasOnce.Do(func() {
		egSchemas, egSchemasErr = differential.LoadCRDs("test/upstream/envoygateway/crds.sh")
	})
	return egSchemas, egSchemasErr
}

// egOutput is the part of egctl's output the checks read.
type egOutput struct {
	BackendTrafficPolicies []egPolicy             `json:"backendTrafficPolicies"`
	SecurityPolicies       []egPolicy             `json:"securityPolicies"`
	ClientTrafficPolicies  []egPolicy             `json:"clientTrafficPolicies"`
	EnvoyExtensionPolicies []egPolicy             `json:"envoyExtensionPolicies"`
	XdsIR                  map[string]egXds       `json:"xdsIR"`
	Extra                  map[string]interface{} `json:"-"`
}

type egPolicy struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Status struct {
		Ancestors []struct {
			AncestorRef struct {
				Kind        string `json:"kind"`
				Name        string `json:"name"`
				Namespace   string `json:"namespace"`
				SectionName string `json:"sectionName"`
			} `json:"ancestorRef"`
			Conditions []struct {
				Type   string `json:"type"`
				Status string `json:"status"`
				Reason string `json:"reason"`
			} `json:"conditions"`
		} `json:"ancestors"`
	} `json:"status"`
}

type egMeta struct {
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	Namespace   string `json:"namespace"`
	SectionName string `json:"sectionName"`
}

type egXds struct {
	HTTP []struct {
		Name     string         `json:"name"`
		Metadata egMeta         `json:"metadata"`
		Timeout  map[string]any `json:"timeout"`
		Routes   []egRoute      `json:"routes"`
	} `json:"http"`
	TCP []struct {
		Metadata egMeta           `json:"metadata"`
		Routes   []map[string]any `json:"routes"`
	} `json:"tcp"`
	UDP []struct {
		Metadata egMeta         `json:"metadata"`
		Route    map[string]any `json:"route"`
	} `json:"udp"`
	EnvoyPatchPolicies []egPatchPolicy `json:"envoyPatchPolicies"`
}

type egRoute struct {
	Name            string         `json:"name"`
	Metadata        egMeta         `json:"metadata"`
	Traffic         map[string]any `json:"traffic"`
	Security        map[string]any `json:"security"`
	EnvoyExtensions map[string]any `json:"envoyExtensions"`
}

func (envoyGateway) Compare(objs []*unstructured.Unstructured, ours *differential.Ours, out []byte) ([]differential.Check, error) {
	var o egOutput
	if err := json.Unmarshal(out, &o); err != nil {
		return nil, fmt.Errorf("egctl output: %w", err)
	}
	checks, err := egRouteChecks(objs, ours, &o)
	if err != nil {
		return nil, err
	}
	lc, err := egListenerChecks(ours, &o)
	if err != nil {
		return nil, err
	}
	checks = append(checks, lc...)
	l4, err := egL4Checks(objs, ours, &o)
	if err != nil {
		return nil, err
	}
	checks = append(checks, l4...)
	checks = append(checks, egPatchChecks(objs, ours, &o)...)
	return append(checks, egStatusChecks(objs, ours, &o)...), nil
}
