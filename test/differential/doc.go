// Package differential judges this project's answers with the implementations' own code on
// random topologies (docs/differential.md): package gen generates them from a seed, each
// Oracle runs an implementation's program on them and reads its output and our offline
// engine's answers into checks, and disagreements are shrunk and written as test/upstream
// cases. It is a module of its own so that nothing it needs enters the product's go.mod.
//
// Files: oracle.go (the Oracle interface and checks), envoygateway*.go (Envoy Gateway's
// egctl), ours.go (our side), values.go (comparable values), run.go and batch.go (judging
// seeds, tallies), shrink.go and writecase.go (cases), objects.go (YAML, CRD defaults).
package differential
