// Package ui is the server and the page of `kubectl effectivepolicy ui`,
// and the self-contained HTML files of --html (docs/ui.md). The page is a
// small front-end app (web/, built into assets/ by hack/build-ui.sh and
// embedded); the server answers its JSON requests with the same API calls
// the plugin's describe, reach and trace make (a Source), and the same trees
// (pkg/cli/render), so the page shows what the terminal shows.
package ui

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// Source is where the answers come from: the cluster's API with the user's
// own credentials, or the manifests of --offline. The plugin's sources
// (cmd/kubectl-effectivepolicy/app) satisfy it.
type Source interface {
	// EffectivePolicies lists the EffectivePolicies of namespace (every
	// namespace for ""), or the ClusterEffectivePolicies when cluster is set.
	EffectivePolicies(ctx context.Context, namespace string, cluster bool) (runtime.Object, error)
	// EffectivePolicy gets one, or the ClusterEffectivePolicy when namespace is "".
	EffectivePolicy(ctx context.Context, namespace, name string) (runtime.Object, error)
	// PolicyReaches lists as EffectivePolicies does.
	PolicyReaches(ctx context.Context, namespace string, cluster bool) (runtime.Object, error)
	// PolicyReach gets one, or the ClusterPolicyReach when namespace is "".
	PolicyReach(ctx context.Context, namespace, name string) (runtime.Object, error)
	// Trace answers a RequestTrace.
	Trace(ctx context.Context, rt *v1alpha1.RequestTrace) (*v1alpha1.RequestTrace, error)
}
