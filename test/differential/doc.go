// Package differential judges this project's answers with the implementations' own code on
// random topologies (docs/differential.md): package gen generates them from a seed, each
// Oracle runs an implementation's program on them and reads its output and our offline
// engine's answers into checks, and disagreements are shrunk and written as test/upstream
// cases. It is a module of its own so that nothing it needs enters the product's go.mod.
//
// This package is the core: oracle.go (the Oracle interface, its registry and checks),
// known.go (the known classes' registry, Classify), ours.go (our side), values.go (comparable
// values), run.go and batch.go (judging seeds, tallies), shrink.go and writecase.go (cases),
// objects.go (YAML, CRDs and their defaults). Each implementation's oracle is a package under
// impl/ (envoygateway, kuadrant, istio, kgateway) that registers itself in init; package all
// imports every one, for cmd/difftest and the tests that judge with every oracle.
package differential
