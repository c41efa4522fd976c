// Package istio is the Istio profile (istio.io/istio release-1.31, CRDs from istio.io/api
// v1.32.0): kinds whose policies all apply, every policy that reaches a workload in Istio's
// evaluation order, and Telemetry, merged level by level as Istio merges it; policies without
// a target apply to their namespace, and in the root
// namespace (istio-system) to the whole mesh. It is a folder of its own, behind
// semantics.Profile, so that Istio's rules are read, checked against upstream and changed
// alone.
package istio
