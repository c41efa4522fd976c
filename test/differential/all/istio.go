//go:build istio

package all

// Istio's oracle only with -tags istio: its first build takes many minutes (impl/istio).
import _ "github.com/effectivepolicy-dev/effectivepolicy/test/differential/impl/istio" // registers the oracle in init
