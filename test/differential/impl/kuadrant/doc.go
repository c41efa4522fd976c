// Package kuadrant is the differential harness's Kuadrant oracle (docs/differential.md,
// "Kuadrant"): kuadrant-operator v1.5.2's own effective-policy code, run by the oracle module
// test/differential/oracles/kuadrant, judges our answers.
//
// Files: kuadrant.go (the oracle, the effective entries per path), attach.go (which paths are
// compared), standing.go (each policy's standing), classes.go (its known class).
package kuadrant
