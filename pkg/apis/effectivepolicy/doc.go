// Package effectivepolicy holds the API group effectivepolicy.dev: the
// read-only EffectivePolicy and ClusterEffectivePolicy resources that show
// which Gateway API policies reach an object and what they add up to.
package effectivepolicy

// GroupName is the API group served by this project.
const GroupName = "effectivepolicy.dev"
