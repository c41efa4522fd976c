// Package all registers every implementation's oracle (test/differential/impl/...) with the
// differential harness, for what judges with all of them: cmd/difftest, and this package's
// tests (TestAgree in make test, TestLongAgree with -tags long). Istio's oracle joins with
// -tags istio (istio.go).
package all

import (
	// Each adapter registers its oracle and its known classes in init.
	_ "github.com/effectivepolicy-dev/effectivepolicy/test/differential/impl/envoygateway"
	_ "github.com/effectivepolicy-dev/effectivepolicy/test/differential/impl/kgateway"
	_ "github.com/effectivepolicy-dev/effectivepolicy/test/differential/impl/kuadrant"
)
