// Package validation checks the specs of the create-only resources of
// effectivepolicy.dev (RequestTrace, EffectivePolicyReview) as Kubernetes
// keeps such checks in pkg/apis/<group>/validation: functions of the API
// types alone that return a field.ErrorList, which the REST layer answers
// as a 422 Invalid. The kubectl plugin calls the same functions offline, so
// a spec the server refuses is refused there with the same fields.
//
// It knows nothing of the engine: what a spec names is checked against
// the cluster (unknown kinds, Gateways that do not exist) by whoever
// answers it.
package validation
