// Package envoygateway is the differential harness's Envoy Gateway oracle (docs/differential.md,
// "Envoy Gateway"): Envoy Gateway v1.9.0's translator, run as egctl, judges our answers.
//
// Files: envoygateway.go (the oracle, egctl's output), checks.go and l4.go (the checks per route
// rule, listener and L4 route, and per policy's status), ir.go (reading the IR's values),
// known.go and facts.go (the known classes and the object facts their predicates read), case.go
// (expected.json of a written case).
package envoygateway
