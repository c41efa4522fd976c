// Package access holds what in an answer depends on who asks: the
// authorizer's decisions, cached per user, resource and namespace
// (Checker); the values of sensitive fields replaced for callers who may
// not get the policy kind that set them (Redactor); the targets of a
// PolicyReach left out where the caller may not read the EffectivePolicies
// (ReachFilter).
//
// Every resource that shows effective policies asks the same questions,
// so they are answered in one place: the REST layer (pkg/registry) applies
// the Redactor and the ReachFilter to what it serves, and traces and
// reviews ask the Checker which objects they may name. The kinds with
// sensitive fields come through SensitiveFields, which the live layer
// implements from the engine's descriptors.
package access
