// Package registry holds the REST storage of the effectivepolicy.dev API
// group, thin wrappers that k8s.io/apiserver serves: get, list and watch
// of the four computed resources (effectivepolicies,
// clustereffectivepolicies, policyreaches, clusterpolicyreaches), each
// backed by a Backend; and create of the two review kinds (requesttraces,
// effectivepolicyreviews), which validate with pkg/apis/.../validation and
// answer with pkg/requesttrace and pkg/review. What a caller may see is
// pkg/access's to decide.
//
// The interfaces it serves from (Backend, EpochBackend, TraceSource) are
// defined here, by their consumer, with methods that use only types of lower
// packages: the storage that implements them does not import this package
// (docs/storage.md, "Layering"). Whoever hands a backend to the REST layer
// (pkg/live, tests) checks that it fits.
package registry

import (
	"context"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

// Backend is what the REST storage of one resource serves from. It holds
// the outputs in one form, *encoded.Object, which the REST layer serves
// without re-encoding (and re-encodes after redaction); nothing in the REST
// layer deals with the decoded types but the table (encoded.SummaryOf: the
// API machinery hands it decoded objects in table watches). The objects a
// Backend returns are shared and must be treated as read-only; the REST
// layer hands shallow copies (own ObjectMeta) to the API machinery.
//
// A versioned.Store of *encoded.Object implements Backend; the live layer
// wraps one to bring dirty objects up to date before Get and List.
type Backend interface {
	// Get returns the object, or an apierrors NotFound error when it is absent.
	// namespace is "" for cluster-scoped resources.
	Get(ctx context.Context, namespace, name string) (*encoded.Object, error)
	// List returns the objects of one namespace ("" = all namespaces), sorted
	// by namespace and name, and the resourceVersion they are current at.
	List(ctx context.Context, namespace string) (objs []*encoded.Object, rv uint64, err error)
	// Watch streams the ADDED / MODIFIED / DELETED events of one namespace
	// ("" = all) that happen strictly after rv, each with an *encoded.Object
	// (a watch.Interface carries runtime.Objects; the REST layer takes them
	// back at one point, watch.go's output). It returns a 410 Gone error
	// (apierrors.NewResourceExpired) when rv is older than the retained history,
	// newer than the current resourceVersion, or of another history (see
	// EpochBackend). The watch ends when ctx is done
	// or Stop is called. It may send BOOKMARK events, with an object of any
	// type whose metadata carries a resourceVersion up to which every event has
	// been sent; the REST layer forwards them (as its own kind) only to clients
	// that allow bookmarks.
	Watch(ctx context.Context, namespace string, rv uint64) (watch.Interface, error)
}

// EpochBackend is implemented by Backends whose resourceVersions carry the
// epoch of their history (versioned.Store): another replica's, or an older
// cache's, resourceVersions are foreign. A watch from a foreign
// resourceVersion is the Backend's to refuse (410 Gone); a list with one
// serves the latest state, as resourceVersionMatch=NotOlderThan allows (the
// client cannot tell which state is newer), except that
// resourceVersionMatch=Exact answers 410 Gone.
type EpochBackend interface {
	// ForeignResourceVersion reports whether the non-zero rv belongs to
	// another history than the Backend's.
	ForeignResourceVersion(rv uint64) bool
}
