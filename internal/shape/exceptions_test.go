package shape

// exceptions are what is over a limit, at the size it has now. An entry may
// only shrink: the test fails when one grows, and when one shrinks or goes
// without its entry being lowered or removed.
var exceptions = map[string]int{
	// The differential harness gained three oracles at once (Kuadrant,
	// Istio, kgateway) beside Envoy Gateway's. Its split, one package per
	// implementation's oracle over a core package (checks, shrinking,
	// cases), needs the core's helpers exported and the cross-oracle tests
	// moved to an external test package; until then the size is held here.
	"package test/differential": 3253,
}
