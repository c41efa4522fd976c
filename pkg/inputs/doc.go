// Package inputs runs the client-go informers that feed the computation
// engine: the Gateway API kinds, Services, Namespaces, CustomResourceDefinitions
// and every policy kind the engine learns about from CRDs.
//
// It is the engine's input side, not storage: nothing it holds is served.
// The objects it delivers go to a Sink (the engine, through pkg/live), which
// parses them into its own model; the informers keep only what they need to
// tell later deletions (see store.go). It imports no other package of this
// module.
package inputs
