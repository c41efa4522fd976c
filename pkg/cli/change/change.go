// Package change turns manifests into the change an EffectivePolicyReview
// takes: the objects to apply, as kubectl apply would send them, and the
// objects to delete; and, for a comparison with no cluster, two complete
// sets of manifests, the second stamped as a review stamps it. The plugin's
// diff and the Change view of its ui both take their change from here, so
// that a manifest means the same in the terminal and on the page.
package change

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/kinds"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/manifests"
)

// Skipped are the objects a review cannot take, left out of the apply list.
type Skipped struct {
	// CRDs: a review cannot add or change a policy kind.
	CRDs []*unstructured.Unstructured
	// Ignored: kinds no effective policy depends on.
	Ignored []*unstructured.Unstructured
}

// Warnings say what was skipped and why, one sentence per reason.
func (s Skipped) Warnings() []string {
	var out []string
	if len(s.CRDs) > 0 {
		out = append(out, fmt.Sprintf("skipped %s: a review cannot add or change a policy kind (the cluster's CRDs are used; apply new ones first)", Names(s.CRDs)))
	}
	if len(s.Ignored) > 0 {
		out = append(out, fmt.Sprintf("skipped %s: no effective policy depends on them", Names(s.Ignored)))
	}
	return out
}

// ApplyOptions say how the objects to apply are placed.
type ApplyOptions struct {
	// Cluster knows the kinds the cluster serves (ok=false for the others).
	Cluster kinds.Resolver
	// Namespace is given to namespaced objects that name none.
	Namespace string
	// Explicit: Namespace was asked for (-n), so an object naming another
	// namespace is refused, as kubectl apply refuses it.
	Explicit bool
}

// Apply turns objs, read from manifests, into the apply list of a review
// as kubectl apply would send them: namespaced objects without a namespace
// in o.Namespace, what a review cannot take skipped (and returned). The
// kinds the manifests' own CRDs define answer for what the cluster does not
// serve yet, so that their policies are refused by name, not misplaced.
// It changes the objects in place.
func Apply(objs []*unstructured.Unstructured, o ApplyOptions) ([]runtime.RawExtension, Skipped, error) {
	var skipped Skipped
	scope, err := scopeOf(objs, o.Cluster, o.Namespace)
	if err != nil {
		return nil, skipped, err
	}
	var kept []*unstructured.Unstructured
	for _, u := range objs {
		switch skip(u.GroupVersionKind().GroupKind()) {
		case skipCRD:
			skipped.CRDs = append(skipped.CRDs, u)
			continue
		case skipIgnored:
			skipped.Ignored = append(skipped.Ignored, u)
			continue
		}
		if o.Explicit && scope.IsNamespaced(u) && u.GetNamespace() != "" && u.GetNamespace() != o.Namespace {
			return nil, skipped, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation", u.GetNamespace(), o.Namespace, u.GetNamespace())
		}
		kept = append(kept, u)
	}
	manifests.SetNamespaces(kept, scope)
	out := make([]runtime.RawExtension, len(kept))
	for i, u := range kept {
		data, err := u.MarshalJSON()
		if err != nil {
			return nil, skipped, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
		out[i] = runtime.RawExtension{Raw: data}
	}
	return out, skipped, nil
}

// scopeOf places objects the way a cluster that serves the kinds of
// cluster (nil: none) and the manifests' own CRDs would.
func scopeOf(objs []*unstructured.Unstructured, cluster kinds.Resolver, ns string) (manifests.Scope, error) {
	files := kinds.NewTable()
	if err := files.AddCRDs(objs); err != nil {
		return manifests.Scope{}, err
	}
	return manifests.Scope{Namespace: ns, Namespaced: func(gk schema.GroupKind) (bool, bool) {
		if cluster != nil {
			if namespaced, ok := cluster.Namespaced(gk); ok {
				return namespaced, true
			}
		}
		return files.Namespaced(gk)
	}}, nil
}

type skipReason int

const (
	keep skipReason = iota
	skipCRD
	skipIgnored
)

// builtinGroups are Kubernetes' own API groups. No policy kind is in one
// (policy kinds are CRDs), and of their kinds effective policies depend on
// Services and Namespaces only; a directory of manifests holds many of the
// others (Deployments, ConfigMaps, RBAC), which the server would refuse.
var builtinGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "autoscaling": true, "policy": true,
	"rbac.authorization.k8s.io": true, "networking.k8s.io": true, "storage.k8s.io": true,
	"scheduling.k8s.io": true, "admissionregistration.k8s.io": true, "apiregistration.k8s.io": true,
	"coordination.k8s.io": true, "discovery.k8s.io": true, "events.k8s.io": true, "node.k8s.io": true,
	"certificates.k8s.io": true, "flowcontrol.apiserver.k8s.io": true, "resource.k8s.io": true,
	"authentication.k8s.io": true, "authorization.k8s.io": true, "storagemigration.k8s.io": true,
	"internal.apiserver.k8s.io": true, "apiextensions.k8s.io": true,
}

// skip says whether a review can take objects of gk. Anything not
// skipped is sent: the server knows which kinds it models.
func skip(gk schema.GroupKind) skipReason {
	switch {
	case gk == schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:
		return skipCRD
	case gk.Group == v1alpha1.SchemeGroupVersion.Group: // this API's own kinds: RequestTrace, reviews
		return skipIgnored
	case gk.Group == "" && (gk.Kind == "Service" || gk.Kind == "Namespace"):
		return keep
	case builtinGroups[gk.Group]:
		return skipIgnored
	}
	return keep
}

// Names lists objects for a warning: Kind namespace/name, the first few.
func Names(objs []*unstructured.Unstructured) string {
	const most = 5
	var parts []string
	for i, u := range objs {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more", len(objs)-most))
			break
		}
		part := u.GetKind()
		if u.GetName() != "" { // a RequestTrace has none
			part += " " + qualified(u.GetNamespace(), u.GetName())
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

func qualified(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
