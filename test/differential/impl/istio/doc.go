// Package istio judges with Istio's own policy selection (istio.go, built only with -tags
// istio, which registers the oracle; without the tag the package is empty).
package istio
