package registry

import (
	"context"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

// Category is the kubectl category both resources belong to
// (`kubectl get effectivepolicy-all` is not a thing; `kubectl get gateway-api` is).
const Category = "gateway-api"

// REST is the read-only REST storage of one resource. It implements
// rest.Getter, rest.Lister, rest.Watcher, rest.TableConvertor, rest.Scoper,
// rest.SingularNameProvider, rest.ShortNamesProvider and
// rest.CategoriesProvider, and deliberately none of the write interfaces, so
// the API machinery answers create/update/patch/delete with 405
// MethodNotAllowed.
type REST struct {
	backend    Backend
	resource   schema.GroupResource
	singular   string
	shortNames []string
	namespaced bool
	kind       encoded.Kind
	newFunc    func() runtime.Object
	newList    func() runtime.Object
	// filter adapts each object to the caller: hides sensitive fields
	// (access.Redactor) or unreadable targets (access.ReachFilter).
	filter callerFilter
	// pages holds the snapshots of paged lists (paging.go).
	pages *pager
	tableConvertor
}

// callerFilter adapts served objects to the caller of a request: ForRequest
// returns the function applied to every object of that request (a watch
// keeps it for its life). The function returns its argument when nothing
// is hidden from the caller, else a new Object.
type callerFilter interface {
	ForRequest(ctx context.Context) func(*encoded.Object) *encoded.Object
}

// noFilter serves every object as stored.
type noFilter struct{}

func (noFilter) ForRequest(context.Context) func(*encoded.Object) *encoded.Object {
	return func(o *encoded.Object) *encoded.Object { return o }
}

// Option configures a REST.
type Option func(*REST)

// WithRedactor makes get, list and watch of effective policies replace the
// sensitive fields a caller may not see (see access.Redactor).
func WithRedactor(r *access.Redactor) Option {
	return func(s *REST) {
		if r != nil && !s.kind.Reach() {
			s.filter = r
		}
	}
}

// WithReachFilter makes get, list and watch of policy reaches hide the
// targets a caller may not see (see access.ReachFilter).
func WithReachFilter(f *access.ReachFilter) Option {
	return func(s *REST) {
		if f != nil && s.kind.Reach() {
			s.filter = f
		}
	}
}

var (
	_ rest.Storage              = &REST{}
	_ rest.Getter               = &REST{}
	_ rest.Lister               = &REST{}
	_ rest.Watcher              = &REST{}
	_ rest.TableConvertor       = &REST{}
	_ rest.Scoper               = &REST{}
	_ rest.SingularNameProvider = &REST{}
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.CategoriesProvider   = &REST{}
)

// NewEffectivePolicyREST serves the namespaced effectivepolicies from b.
func NewEffectivePolicyREST(b Backend, opts ...Option) *REST {
	return apply(&REST{
		backend:    b,
		resource:   v1alpha1.Resource("effectivepolicies"),
		singular:   "effectivepolicy",
		shortNames: []string{"effpol"},
		namespaced: true,
		kind:       encoded.KindEffectivePolicy,
		newFunc:    func() runtime.Object { return &v1alpha1.EffectivePolicy{} },
		newList:    func() runtime.Object { return &v1alpha1.EffectivePolicyList{} },
	}, opts)
}

// NewClusterEffectivePolicyREST serves the cluster-scoped clustereffectivepolicies from b.
func NewClusterEffectivePolicyREST(b Backend, opts ...Option) *REST {
	return apply(&REST{
		backend:    b,
		resource:   v1alpha1.Resource("clustereffectivepolicies"),
		singular:   "clustereffectivepolicy",
		shortNames: []string{"ceffpol"},
		namespaced: false,
		kind:       encoded.KindClusterEffectivePolicy,
		newFunc:    func() runtime.Object { return &v1alpha1.ClusterEffectivePolicy{} },
		newList:    func() runtime.Object { return &v1alpha1.ClusterEffectivePolicyList{} },
	}, opts)
}

// NewPolicyReachREST serves the namespaced policyreaches from b.
func NewPolicyReachREST(b Backend, opts ...Option) *REST {
	return apply(&REST{
		backend:    b,
		resource:   v1alpha1.Resource("policyreaches"),
		singular:   "policyreach",
		shortNames: []string{"polreach"},
		namespaced: true,
		kind:       encoded.KindPolicyReach,
		newFunc:    func() runtime.Object { return &v1alpha1.PolicyReach{} },
		newList:    func() runtime.Object { return &v1alpha1.PolicyReachList{} },
	}, opts)
}

// NewClusterPolicyReachREST serves the cluster-scoped clusterpolicyreaches from b.
func NewClusterPolicyReachREST(b Backend, opts ...Option) *REST {
	return apply(&REST{
		backend:    b,
		resource:   v1alpha1.Resource("clusterpolicyreaches"),
		singular:   "clusterpolicyreach",
		shortNames: []string{"cpolreach"},
		namespaced: false,
		kind:       encoded.KindClusterPolicyReach,
		newFunc:    func() runtime.Object { return &v1alpha1.ClusterPolicyReach{} },
		newList:    func() runtime.Object { return &v1alpha1.ClusterPolicyReachList{} },
	}, opts)
}

func apply(r *REST, opts []Option) *REST {
	r.pages = newPager()
	r.filter = noFilter{}
	r.tableConvertor = tableConvertor{reach: r.kind.Reach()}
	for _, o := range opts {
		o(r)
	}
	return r
}

// New implements rest.Storage.
func (r *REST) New() runtime.Object { return r.newFunc() }

// Destroy implements rest.Storage. The backend's life cycle belongs to whoever built it.
func (r *REST) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (r *REST) NamespaceScoped() bool { return r.namespaced }

// GetSingularName implements rest.SingularNameProvider.
func (r *REST) GetSingularName() string { return r.singular }

// ShortNames implements rest.ShortNamesProvider.
func (r *REST) ShortNames() []string { return r.shortNames }

// Categories implements rest.CategoriesProvider.
func (r *REST) Categories() []string { return []string{Category} }

// NewList implements rest.Lister.
func (r *REST) NewList() runtime.Object { return r.newList() }

func (r *REST) namespace(ctx context.Context) string {
	if !r.namespaced {
		return ""
	}
	return genericapirequest.NamespaceValue(ctx)
}

// Get implements rest.Getter. It always serves the latest state; a
// resourceVersion in the options is ignored.
func (r *REST) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.backend.Get(ctx, r.namespace(ctx), name)
	if apierrors.IsNotFound(err) {
		// Whatever the backend said, answer with this resource's NotFound Status.
		return nil, apierrors.NewNotFound(r.resource, name)
	}
	if err != nil {
		return nil, err
	}
	// A shallow copy (own ObjectMeta, which the API machinery may set)
	// rather than a deep one: nothing on the serving path writes the content
	// below (compressed bytes, immutable), and the Redactor builds a new
	// object when it redacts. The same holds for list items and watch events
	// (watch.go), where a deep copy would cost one copy per event and per
	// watcher.
	return r.filter.ForRequest(ctx)(served(obj)), nil
}

// served is the copy of a stored object that is handed to the API
// machinery: its own ObjectMeta, the content shared.
func served(o *encoded.Object) *encoded.Object {
	c := *o
	return &c
}

// List implements rest.Lister. With a limit it pages: see paging.go.
func (r *REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	p, err := r.predicate(options)
	if err != nil {
		return nil, err
	}
	if options == nil {
		options = &metainternalversion.ListOptions{}
	}
	ns := r.namespace(ctx)
	var (
		objs   []*encoded.Object
		rv     uint64
		start  int
		snapID string
	)
	if options.Continue != "" {
		// The resourceVersion of a continued list is the first page's.
		if snapID, objs, rv, start, err = r.pages.resume(options.Continue, ns); err != nil {
			return nil, err
		}
	} else {
		if objs, rv, err = r.backend.List(ctx, ns); err != nil {
			return nil, err
		}
		want, set, err := parseRV(options.ResourceVersion)
		if err != nil {
			return nil, err
		}
		if set && r.foreign(want) {
			if options.ResourceVersionMatch == metav1.ResourceVersionMatchExact {
				return nil, foreignRV(want)
			}
			set = false // NotOlderThan (or unset): the latest state will do
		}
		if set && want > rv {
			return nil, tooLargeRV(want, rv)
		}
		if set && options.ResourceVersionMatch == metav1.ResourceVersionMatchExact && want != rv {
			return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", want, rv))
		}
	}
	redact := r.filter.ForRequest(ctx)
	capacity := len(objs) - start
	if options.Limit > 0 && int64(capacity) > options.Limit {
		capacity = int(options.Limit)
	}
	items := make([]*encoded.Object, 0, capacity)
	// The items' copies (see served), in one allocation: capacity bounds
	// the items, so copies never moves.
	copies := make([]encoded.Object, 0, capacity)
	next := len(objs)
	for i := start; i < len(objs); i++ {
		o := objs[i]
		if !p.matches(o) {
			continue
		}
		if options.Limit > 0 && int64(len(items)) == options.Limit {
			next = i
			break
		}
		copies = append(copies, *o)
		items = append(items, redact(&copies[len(copies)-1]))
	}
	var token string
	var remaining *int64
	if next < len(objs) {
		snapID = r.pages.save(snapID, ns, objs, rv)
		token = encodeToken(snapID, next, rv)
		if p.empty() {
			n := int64(len(objs) - next)
			remaining = &n
		}
	}
	// Its JSON is written from the items' stored bytes, not re-encoded.
	l := &encoded.List{Kind: r.kind, Items: items}
	l.ResourceVersion = strconv.FormatUint(rv, 10)
	l.Continue, l.RemainingItemCount = token, remaining
	return l, nil
}

// Watch implements rest.Watcher: watch from a resourceVersion, the legacy
// synthetic ADDED events for resourceVersion "" / "0", and the WatchList
// protocol (sendInitialEvents=true: initial ADDED events, then a BOOKMARK
// annotated k8s.io/initial-events-end when bookmarks are allowed).
func (r *REST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	if options == nil {
		options = &metainternalversion.ListOptions{}
	}
	p, err := r.predicate(options)
	if err != nil {
		return nil, err
	}
	ns := r.namespace(ctx)
	want, set, err := parseRV(options.ResourceVersion)
	if err != nil {
		return nil, err
	}
	if set && want == 0 {
		set = false // "0" means "any": the current state
	}
	initial := !set
	if options.SendInitialEvents != nil {
		initial = *options.SendInitialEvents
	}

	w := &filterWatch{
		r:         r,
		p:         p,
		out:       make(chan watch.Event, watchBuffer),
		done:      make(chan struct{}),
		visible:   map[string]bool{},
		bookmarks: options.AllowWatchBookmarks,
		redact:    r.filter.ForRequest(ctx), // per watcher: the caller's access
	}
	var from uint64
	switch {
	case initial:
		objs, rv, err := r.backend.List(ctx, ns)
		if err != nil {
			return nil, err
		}
		if set && want > rv && !r.foreign(want) {
			return nil, tooLargeRV(want, rv)
		}
		for _, o := range objs {
			if p.matches(o) {
				w.initial = append(w.initial, o)
				w.visible[key(o)] = true
			}
		}
		w.complete = true
		w.endInitial = options.SendInitialEvents != nil && *options.SendInitialEvents && options.AllowWatchBookmarks
		w.initialRV = rv
		from = rv
	case set:
		from = want
	default:
		// sendInitialEvents=false without a resourceVersion: start at the
		// most recent state.
		_, rv, err := r.backend.List(ctx, ns)
		if err != nil {
			return nil, err
		}
		w.complete = false
		from = rv
	}
	src, err := r.backend.Watch(ctx, ns, from)
	if err != nil {
		return nil, err
	}
	w.src = src
	go w.run(ctx)
	return w, nil
}

// watchBuffer is how many events a watch may hold ready for the API
// server's watch handler. The handler flushes the response after an event
// only when no other one is waiting (len of this channel): unbuffered, every
// event of an edit reaching hundreds of outputs was its own HTTP/2 frame and
// flush, here and again in kube-apiserver's proxy.
const watchBuffer = 128

// parseRV parses a resourceVersion parameter; set is false for "".
func parseRV(s string) (rv uint64, set bool, err error) {
	if s == "" {
		return 0, false, nil
	}
	rv, err = strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q: %v", s, err))
	}
	return rv, true, nil
}

// foreign reports whether rv is a resourceVersion of another history than
// the backend's (see EpochBackend).
func (r *REST) foreign(rv uint64) bool {
	e, ok := r.backend.(EpochBackend)
	return ok && rv != 0 && e.ForeignResourceVersion(rv)
}

// foreignRV is the 410 Gone of a resourceVersion from another history.
func foreignRV(rv uint64) error {
	return apierrors.NewResourceExpired(fmt.Sprintf("resource version %d is from another server instance or an older cache; relist", rv))
}

// tooLargeRV is the error the watch cache gives for a resourceVersion from
// the future; client-go reflectors recognize its cause.
func tooLargeRV(want, current uint64) error {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", want, current), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}

// predicate is a label and field selection. Only the field selectors
// metadata.name and metadata.namespace are supported.
type predicate struct {
	label labels.Selector
	field fields.Selector
}

func (r *REST) predicate(options *metainternalversion.ListOptions) (predicate, error) {
	p := predicate{label: labels.Everything(), field: fields.Everything()}
	if options == nil {
		return p, nil
	}
	if options.LabelSelector != nil {
		p.label = options.LabelSelector
	}
	if options.FieldSelector != nil {
		for _, req := range options.FieldSelector.Requirements() {
			switch req.Field {
			case "metadata.name", "metadata.namespace":
			default:
				return p, apierrors.NewBadRequest(fmt.Sprintf("field selector %q is not supported for %s: only metadata.name and metadata.namespace are", req.Field, r.resource))
			}
		}
		p.field = options.FieldSelector
	}
	return p, nil
}

func (p predicate) empty() bool { return p.label.Empty() && p.field.Empty() }

func (p predicate) matches(o *encoded.Object) bool {
	if p.empty() {
		return true
	}
	if !p.label.Matches(labels.Set(o.Labels)) {
		return false
	}
	return p.field.Matches(fields.Set{"metadata.name": o.Name, "metadata.namespace": o.Namespace})
}

func key(o *encoded.Object) string { return o.Namespace + "/" + o.Name }
