package kgateway

import (
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// kgateway judges with kgateway v2.2.0's own translator, run by the oracle
// module test/differential/oracles/kgateway (kgateway's translator test
// harness in a test binary built from the released module): per route rule
// through each listener, the policy every TrafficPolicy merge unit came from
// (the merge-origin metadata kgateway writes on Envoy routes and virtual
// hosts), and the route timeout and retry count Envoy is given.
type kgateway struct{}

func init() { differential.Register(kgateway{}) }

func (kgateway) Name() string { return "kgateway" }

// Features: kgateway's own topologies (gen/kgateway.go).
func (kgateway) Features() gen.Features { return gen.Features{Kgateway: true} }

// kgatewayCommand is oracles/kgateway's main (it builds and caches kgateway's test binary on its
// first run); $KGATEWAY_ORACLE names a built command instead.
var kgatewayCommand = differential.OracleCommand("KGATEWAY_ORACLE", "kgateway")

// Command implements differential.Oracle.
func (kgateway) Command() ([]string, error) { return kgatewayCommand() }

// Input: the objects in the order the case lists them, which kgateway's
// harness turns into their age.
func (kgateway) Input(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return objs, nil
}

var (
	kgSchemasOnce sync.Once
	kgSchemas     *differential.Schemas
	kgSchemasErr  error
)

// Ours adds kgateway's policy CRDs (test/upstream/kgateway/crds.sh) and their defaults.
func (kgateway) Ours(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	kgSchemasOnce.Do(func() {
		kgSchemas, kgSchemasErr = differential.LoadCRDs("test/upstream/kgateway/crds.sh")
	})
	if kgSchemasErr != nil {
		return nil, kgSchemasErr
	}
	return kgSchemas.Stored(objs), nil
}

// unitKey is the merge-origin name of a unit's pointer ("/rateLimit/local" is "rateLimit.local").
func unitKey(pointer string) string {
	return strings.ReplaceAll(strings.TrimPrefix(pointer, "/"), "/", ".")
}

// kgRouteOnly are the units kgateway applies on routes only: a virtual
// host's merge origins may name a Gateway or listener policy's timeouts,
// but handlePerVHostPolicies never applies them (trafficpolicy
// traffic_policy_plugin.go).
var kgRouteOnly = map[string]bool{"timeouts": true, "urlRewrite": true, "autoHostRewrite": true}

// LongOnly keeps kgateway out of make test's TestAgree: its first run builds
// kgateway's test binary (many minutes on 2 cores).
func (kgateway) LongOnly() bool { return true }

// Kinds are the policy kinds whose checks must see values.
func (kgateway) Kinds() []string { return []string{gen.TP, gen.HLP, gen.LP, gen.BCP} }
