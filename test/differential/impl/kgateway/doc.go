// Package kgateway is the differential harness's kgateway oracle (docs/differential.md,
// "kgateway"): kgateway v2.2.0's own translator, run by the oracle module
// test/differential/oracles/kgateway, judges our answers. It is judged only in the long run
// (LongOnly): its test binary's first build takes many minutes.
//
// Files: kgateway.go (the oracle), checks.go (TrafficPolicy: the checks per route rule through each
// listener), listeners.go (HTTPListenerPolicy and ListenerPolicy per Envoy listener,
// BackendConfigPolicy per cluster), known.go (the disagreement docs/differential.md explains).
package kgateway
