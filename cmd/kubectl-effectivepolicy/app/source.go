package app

import (
	"context"
	"fmt"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/validation"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/kinds"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/manifests"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/offline"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/pagedlist"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/review"
)

// Source answers the commands: the cluster's API (online) or the same
// objects computed from manifests (offline). Both return the API objects,
// which the commands print with the same code.
type Source interface {
	// Kinds resolves the kinds the user types.
	Kinds() kinds.Resolver
	// Namespace is the namespace of -n, or the default one.
	Namespace() (string, error)
	// EffectivePolicy gets an EffectivePolicy, or the
	// ClusterEffectivePolicy name when namespace is "".
	EffectivePolicy(ctx context.Context, namespace, name string) (runtime.Object, error)
	// EffectivePolicies lists the EffectivePolicies of namespace (every
	// namespace for ""), or the ClusterEffectivePolicies when cluster is
	// set, as a list object.
	EffectivePolicies(ctx context.Context, namespace string, cluster bool) (runtime.Object, error)
	// PolicyReach gets a PolicyReach, or the ClusterPolicyReach name when
	// namespace is "".
	PolicyReach(ctx context.Context, namespace, name string) (runtime.Object, error)
	// PolicyReaches lists as EffectivePolicies does.
	PolicyReaches(ctx context.Context, namespace string, cluster bool) (runtime.Object, error)
	// Trace answers a RequestTrace.
	Trace(ctx context.Context, rt *v1alpha1.RequestTrace) (*v1alpha1.RequestTrace, error)
	// Review answers an EffectivePolicyReview.
	Review(ctx context.Context, rv *v1alpha1.EffectivePolicyReview) (*v1alpha1.EffectivePolicyReview, error)
}

// onlineSource reads the cluster with the generated clientset.
type onlineSource struct {
	client    versioned.Interface
	kinds     kinds.Resolver
	namespace func() (string, error)
}

func newOnlineSource(o *Options) (Source, error) {
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	client, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper, err := o.ConfigFlags.ToRESTMapper()
	if err != nil {
		return nil, err
	}
	return &onlineSource{
		client: client,
		kinds:  kinds.Mapper{Mapper: mapper, Fallback: kinds.NewTable()},
		namespace: func() (string, error) {
			ns, _, err := o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
			return ns, err
		},
	}, nil
}

func (s *onlineSource) Kinds() kinds.Resolver      { return s.kinds }
func (s *onlineSource) Namespace() (string, error) { return s.namespace() }

func (s *onlineSource) EffectivePolicy(ctx context.Context, namespace, name string) (runtime.Object, error) {
	c := s.client.EffectivepolicyV1alpha1()
	if namespace == "" {
		return c.ClusterEffectivePolicies().Get(ctx, name, metav1.GetOptions{})
	}
	return c.EffectivePolicies(namespace).Get(ctx, name, metav1.GetOptions{})
}

// EffectivePolicies lists in pages, decoded while the next is fetched
// (pkg/cli/pagedlist: a clientset's List of 40,000 takes 20 s, mostly
// decoding on one core).
func (s *onlineSource) EffectivePolicies(ctx context.Context, namespace string, cluster bool) (runtime.Object, error) {
	if cluster {
		return s.list(ctx, "", "clustereffectivepolicies", func() runtime.Object { return &v1alpha1.ClusterEffectivePolicyList{} })
	}
	return s.list(ctx, namespace, "effectivepolicies", func() runtime.Object { return &v1alpha1.EffectivePolicyList{} })
}

func (s *onlineSource) list(ctx context.Context, namespace, resource string, newList func() runtime.Object) (runtime.Object, error) {
	return pagedlist.List(ctx, pagedlist.Request{
		Client:    s.client.EffectivepolicyV1alpha1().RESTClient(),
		Namespace: namespace,
		Resource:  resource,
		NewList:   newList,
	})
}

func (s *onlineSource) PolicyReach(ctx context.Context, namespace, name string) (runtime.Object, error) {
	c := s.client.EffectivepolicyV1alpha1()
	if namespace == "" {
		return c.ClusterPolicyReaches().Get(ctx, name, metav1.GetOptions{})
	}
	return c.PolicyReaches(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (s *onlineSource) PolicyReaches(ctx context.Context, namespace string, cluster bool) (runtime.Object, error) {
	if cluster {
		return s.list(ctx, "", "clusterpolicyreaches", func() runtime.Object { return &v1alpha1.ClusterPolicyReachList{} })
	}
	return s.list(ctx, namespace, "policyreaches", func() runtime.Object { return &v1alpha1.PolicyReachList{} })
}

// Trace creates the RequestTrace; the server validates it and answers in
// its status (nothing is stored).
func (s *onlineSource) Trace(ctx context.Context, rt *v1alpha1.RequestTrace) (*v1alpha1.RequestTrace, error) {
	return s.client.EffectivepolicyV1alpha1().RequestTraces().Create(ctx, rt, metav1.CreateOptions{})
}

// Review creates the EffectivePolicyReview; the server answers in its
// status (nothing is stored, the live state is not touched).
func (s *onlineSource) Review(ctx context.Context, rv *v1alpha1.EffectivePolicyReview) (*v1alpha1.EffectivePolicyReview, error) {
	return s.client.EffectivepolicyV1alpha1().EffectivePolicyReviews().Create(ctx, rv, metav1.CreateOptions{})
}

// offlineSource answers from manifests (pkg/cli/offline).
type offlineSource struct {
	cluster   *offline.Cluster
	kinds     *kinds.Table
	namespace string
}

// newOfflineSource reads the manifests of -f and computes them. Objects
// that name no namespace go to -n's (kubectl's default, "default", without
// it: offline answers do not depend on the kubeconfig of the machine).
func newOfflineSource(o *Options) (Source, error) {
	objs, err := manifests.Read(manifests.Options{Filenames: o.Offline.Filenames, Recursive: o.Offline.Recursive, Stdin: o.In})
	if err != nil {
		return nil, err
	}
	s, _, err := offlineSourceOf(o, objs)
	return s, err
}

// offlineSourceOf computes objs, read from manifests, and returns them
// completed (pkg/cli/manifests.Complete: namespaces, timestamps).
func offlineSourceOf(o *Options, objs []*unstructured.Unstructured) (*offlineSource, []*unstructured.Unstructured, error) {
	ns := "default"
	if o.ConfigFlags.Namespace != nil && *o.ConfigFlags.Namespace != "" {
		ns = *o.ConfigFlags.Namespace
	}
	table := kinds.NewTable()
	if err := table.AddCRDs(objs); err != nil {
		return nil, nil, err
	}
	objs = manifests.Complete(objs, manifests.Scope{Namespace: ns, Namespaced: table.Namespaced})
	opts, err := o.Offline.computeOptions()
	if err != nil {
		return nil, nil, err
	}
	c, err := offline.New(objs, opts)
	if err != nil {
		return nil, nil, err
	}
	return &offlineSource{cluster: c, kinds: table, namespace: ns}, objs, nil
}

func (o OfflineOptions) computeOptions() (compute.Options, error) {
	opts := compute.Options{DefaultInheritedStrategy: o.DefaultInheritedStrategy}
	switch o.DefaultInheritedStrategy {
	case "", "Atomic", "Patch":
	default:
		return opts, fmt.Errorf("--default-inherited-strategy must be Atomic or Patch, not %q", o.DefaultInheritedStrategy)
	}
	if o.PolicyDescriptors != "" {
		data, err := os.ReadFile(o.PolicyDescriptors)
		if err != nil {
			return opts, fmt.Errorf("--policy-descriptors: %w", err)
		}
		if opts.Descriptors, err = compute.LoadDescriptors(data); err != nil {
			return opts, fmt.Errorf("--policy-descriptors %s: %w", o.PolicyDescriptors, err)
		}
	}
	return opts, nil
}

func (s *offlineSource) Kinds() kinds.Resolver      { return s.kinds }
func (s *offlineSource) Namespace() (string, error) { return s.namespace, nil }

func (s *offlineSource) EffectivePolicy(_ context.Context, namespace, name string) (runtime.Object, error) {
	if obj, ok := s.cluster.EffectivePolicy(namespace, name); ok {
		return obj, nil
	}
	return nil, apierrors.NewNotFound(scopedResource("effectivepolicies", namespace == ""), name)
}

func (s *offlineSource) EffectivePolicies(_ context.Context, namespace string, cluster bool) (runtime.Object, error) {
	objs := s.cluster.EffectivePolicies(namespace, cluster)
	if cluster {
		l := &v1alpha1.ClusterEffectivePolicyList{}
		for _, o := range objs {
			l.Items = append(l.Items, *o.(*v1alpha1.ClusterEffectivePolicy))
		}
		return l, nil
	}
	l := &v1alpha1.EffectivePolicyList{}
	for _, o := range objs {
		l.Items = append(l.Items, *o.(*v1alpha1.EffectivePolicy))
	}
	return l, nil
}

func (s *offlineSource) PolicyReach(_ context.Context, namespace, name string) (runtime.Object, error) {
	if obj, ok := s.cluster.PolicyReach(namespace, name); ok {
		return obj, nil
	}
	return nil, apierrors.NewNotFound(scopedResource("policyreaches", namespace == ""), name)
}

func (s *offlineSource) PolicyReaches(_ context.Context, namespace string, cluster bool) (runtime.Object, error) {
	objs := s.cluster.PolicyReaches(namespace, cluster)
	if cluster {
		l := &v1alpha1.ClusterPolicyReachList{}
		for _, o := range objs {
			l.Items = append(l.Items, *o.(*v1alpha1.ClusterPolicyReach))
		}
		return l, nil
	}
	l := &v1alpha1.PolicyReachList{}
	for _, o := range objs {
		l.Items = append(l.Items, *o.(*v1alpha1.PolicyReach))
	}
	return l, nil
}

var requestTraceGK = v1alpha1.SchemeGroupVersion.WithKind("RequestTrace").GroupKind()

// Trace validates the trace as the server does (the same function) and
// answers it.
func (s *offlineSource) Trace(_ context.Context, rt *v1alpha1.RequestTrace) (*v1alpha1.RequestTrace, error) {
	if errs := validation.ValidateRequestTrace(rt); len(errs) > 0 {
		return nil, apierrors.NewInvalid(requestTraceGK, rt.Name, errs)
	}
	return s.cluster.Trace(rt)
}

// Review answers the review as the server does (pkg/review: the same
// checks, the same changes, sorted the same way) on the manifests' engine,
// with everything visible.
func (s *offlineSource) Review(ctx context.Context, rv *v1alpha1.EffectivePolicyReview) (*v1alpha1.EffectivePolicyReview, error) {
	return answerReview(ctx, s.cluster, rv)
}

// answerReview answers rv over source as the server answers a review,
// with no authorizer (everything visible, nothing redacted).
func answerReview(ctx context.Context, source review.Source, rv *v1alpha1.EffectivePolicyReview) (*v1alpha1.EffectivePolicyReview, error) {
	return review.Answer(ctx, source, rv, review.Options{})
}

// scopedResource is the resource, its cluster-scoped twin when cluster is set.
func scopedResource(resource string, cluster bool) schema.GroupResource {
	if cluster {
		resource = "cluster" + resource
	}
	return v1alpha1.Resource(resource)
}

// WatchEffectivePolicies watches as EffectivePolicies lists, from
// resourceVersion, with the user's credentials: the ui page's Live view.
func (s *onlineSource) WatchEffectivePolicies(ctx context.Context, namespace string, cluster bool, resourceVersion string) (watch.Interface, error) {
	c := s.client.EffectivepolicyV1alpha1()
	opts := metav1.ListOptions{ResourceVersion: resourceVersion, AllowWatchBookmarks: true}
	if cluster {
		return c.ClusterEffectivePolicies().Watch(ctx, opts)
	}
	return c.EffectivePolicies(namespace).Watch(ctx, opts)
}

// WatchPolicyReaches watches as PolicyReaches lists, from resourceVersion,
// with the user's credentials: the ui page's Policy view's list.
func (s *onlineSource) WatchPolicyReaches(ctx context.Context, namespace string, cluster bool, resourceVersion string) (watch.Interface, error) {
	c := s.client.EffectivepolicyV1alpha1()
	opts := metav1.ListOptions{ResourceVersion: resourceVersion, AllowWatchBookmarks: true}
	if cluster {
		return c.ClusterPolicyReaches().Watch(ctx, opts)
	}
	return c.PolicyReaches(namespace).Watch(ctx, opts)
}
