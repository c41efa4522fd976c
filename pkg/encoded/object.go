package encoded

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/klauspost/compress/s2"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// S2 block encoding is deterministic, so equal targets compress to equal
// bytes: the versioned store compares outputs by their fields (metadata,
// summary, compressed targets) and finds a restored output equal to the same
// output computed afresh.

// maxTargetsJSON bounds the decoded size of one output's targets (a damaged
// length must not make the server allocate without bound).
const maxTargetsJSON = 256 << 20

// encodeBufs recycles New's JSON buffer (only the compressed form is kept).
var encodeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

// Summary is what the table printer and the redactor need without decoding
// the targets.
type Summary struct {
	// TargetKinds are the target kinds, in order of appearance, joined by ",".
	TargetKinds string `json:"targetKinds,omitempty"`
	// Policies is the number of distinct source policies.
	Policies int64 `json:"policies,omitempty"`
	// PolicyKinds are the policy kinds, sorted, joined by ",".
	PolicyKinds string `json:"policyKinds,omitempty"`
	// PolicyGroupKinds are the policy kinds with their groups, sorted.
	PolicyGroupKinds []schema.GroupKind `json:"policyGroupKinds,omitempty"`
	// AssumedKinds are the policy kinds computed with assumed semantics
	// (v1alpha1.SemanticsAssumed), sorted, joined by ",".
	AssumedKinds string `json:"assumedKinds,omitempty"`
	// Reach is set for a PolicyReach or ClusterPolicyReach, whose
	// PolicyKinds and Policies are those of its policies.
	Reach *ReachSummary `json:"reach,omitempty"`
}

// Summarize computes the Summary of targets.
func Summarize(targets []v1alpha1.Target) Summary {
	var kinds, policyKinds, assumed []string
	seenKind := map[string]bool{}
	seenPolicyKind := map[string]bool{}
	seenGK := map[schema.GroupKind]bool{}
	var gks []schema.GroupKind
	policies := map[string]bool{}
	for _, t := range targets {
		if !seenKind[t.Kind] {
			seenKind[t.Kind] = true
			kinds = append(kinds, t.Kind)
		}
		for _, p := range t.Policies {
			if !seenPolicyKind[p.Kind] {
				seenPolicyKind[p.Kind] = true
				policyKinds = append(policyKinds, p.Kind)
				if p.Semantics == v1alpha1.SemanticsAssumed {
					assumed = append(assumed, p.Kind)
				}
			}
			if gk := (schema.GroupKind{Group: p.Group, Kind: p.Kind}); !seenGK[gk] {
				seenGK[gk] = true
				gks = append(gks, gk)
			}
			for _, s := range p.Sources {
				policies[p.Group+"/"+p.Kind+"/"+s.Namespace+"/"+s.Name] = true
			}
		}
	}
	sort.Strings(policyKinds)
	sort.Strings(assumed)
	sort.Slice(gks, func(i, j int) bool {
		if gks[i].Group != gks[j].Group {
			return gks[i].Group < gks[j].Group
		}
		return gks[i].Kind < gks[j].Kind
	})
	return Summary{
		TargetKinds:      strings.Join(kinds, ","),
		Policies:         int64(len(policies)),
		PolicyKinds:      strings.Join(policyKinds, ","),
		PolicyGroupKinds: gks,
		AssumedKinds:     strings.Join(assumed, ","),
	}
}

// Object is an EffectivePolicy, ClusterEffectivePolicy, PolicyReach or
// ClusterPolicyReach (Kind says which) held as its metadata and its
// compressed list: the targets of an effective policy, the policies of a
// reach. The list and Summary are immutable and shared between copies; the
// metadata is the object's own (the versioned store sets resourceVersion,
// uid and creationTimestamp on a shallow copy).
type Object struct {
	metav1.ObjectMeta
	// Kind is the served kind.
	Kind Kind
	// Summary of the list.
	Summary *Summary

	// targets is the S2-compressed JSON of the kind's list (targets or
	// policies); nil when the list is empty.
	targets []byte
}

var (
	_ runtime.CacheableObject = &Object{}
	_ metav1.Object           = &Object{}
)

// New encodes an EffectivePolicy, ClusterEffectivePolicy, PolicyReach or
// ClusterPolicyReach; an *Object is returned as is.
func New(obj runtime.Object) (*Object, error) {
	switch o := obj.(type) {
	case *Object:
		return o, nil
	case *v1alpha1.EffectivePolicy:
		return withTargets(o.ObjectMeta, KindEffectivePolicy, o.Targets)
	case *v1alpha1.ClusterEffectivePolicy:
		return withTargets(o.ObjectMeta, KindClusterEffectivePolicy, o.Targets)
	case *v1alpha1.PolicyReach:
		return withPolicies(o.ObjectMeta, KindPolicyReach, o.Policies)
	case *v1alpha1.ClusterPolicyReach:
		return withPolicies(o.ObjectMeta, KindClusterPolicyReach, o.Policies)
	}
	return nil, fmt.Errorf("encoded: unexpected object %T", obj)
}

// MustNew is New for objects known to encode (fixed objects of tests and
// examples); it panics on an error.
func MustNew(obj runtime.Object) *Object {
	o, err := New(obj)
	if err != nil {
		panic(err)
	}
	return o
}

// WithTargets returns an Object with o's metadata (its own copy) and scope
// holding targets instead of o's: the redactor's way back to this form after
// it edited decoded targets. o is not modified.
func (o *Object) WithTargets(targets []v1alpha1.Target) (*Object, error) {
	return withTargets(*o.ObjectMeta.DeepCopy(), o.Kind, targets)
}

func withTargets(om metav1.ObjectMeta, kind Kind, targets []v1alpha1.Target) (*Object, error) {
	s := Summarize(targets)
	if len(targets) == 0 {
		return &Object{ObjectMeta: om, Kind: kind, Summary: &s}, nil
	}
	buf := encodeBufs.Get().(*[]byte)
	data, err := appendTargets((*buf)[:0], targets)
	if err != nil {
		encodeBufs.Put(buf)
		return nil, err
	}
	return compressed(om, kind, &s, buf, data), nil
}

// compressed returns the Object holding data (the JSON of its list, written
// into the pooled *buf) compressed.
func compressed(om metav1.ObjectMeta, kind Kind, s *Summary, buf *[]byte, data []byte) *Object {
	// s2.Encode writes into a buffer of the worst-case size (larger than
	// the input) and returns a slice of it: keep an exact copy, not that
	// buffer (which would keep the larger worst-case size of every output alive).
	comp := encodeBufs.Get().(*[]byte)
	enc := s2.Encode((*comp)[:cap(*comp)], data)
	out := &Object{ObjectMeta: om, Kind: kind, Summary: s, targets: append(make([]byte, 0, len(enc)), enc...)}
	*comp = enc[:0]
	encodeBufs.Put(comp)
	*buf = data
	encodeBufs.Put(buf)
	return out
}

// GetObjectKind implements runtime.Object. It returns a fresh TypeMeta: an
// Object is shared between requests, so nothing may set its kind.
func (o *Object) GetObjectKind() schema.ObjectKind {
	return &metav1.TypeMeta{Kind: o.Kind.String(), APIVersion: v1alpha1.SchemeGroupVersion.String()}
}

// DeepCopyObject implements runtime.Object; the immutable content is shared.
func (o *Object) DeepCopyObject() runtime.Object {
	c := *o
	o.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

// TargetsJSON returns the JSON of the targets list (nil when there are none).
func (o *Object) TargetsJSON() ([]byte, error) {
	if o.targets == nil {
		return nil, nil
	}
	return o.appendTargets(nil)
}

// appendTargets appends the decompressed targets to dst.
func (o *Object) appendTargets(dst []byte) ([]byte, error) {
	n, err := s2.DecodedLen(o.targets)
	if err == nil && n > maxTargetsJSON {
		err = fmt.Errorf("%d bytes", n)
	}
	if err == nil {
		at := len(dst)
		dst = slices.Grow(dst, n)[:at+n]
		if _, err = s2.Decode(dst[at:], o.targets); err != nil {
			dst = dst[:at]
		}
	}
	if err != nil {
		return dst, fmt.Errorf("encoded: decompressing %s %s/%s: %w", o.Kind.String(), o.Namespace, o.Name, err)
	}
	return dst, nil
}

// Targets decodes the targets of an EffectivePolicy or
// ClusterEffectivePolicy.
func (o *Object) Targets() ([]v1alpha1.Target, error) {
	if o.Kind.Reach() {
		return nil, fmt.Errorf("encoded: %s has no targets", o.Kind)
	}
	data, err := o.TargetsJSON()
	if err != nil || data == nil {
		return nil, err
	}
	var targets []v1alpha1.Target
	if err := json.Unmarshal(data, &targets); err != nil {
		return nil, fmt.Errorf("encoded: decoding %s %s/%s: %w", o.Kind.String(), o.Namespace, o.Name, err)
	}
	return targets, nil
}

// Decode returns the object as its API type (*v1alpha1.EffectivePolicy,
// ...; TypeMeta set), owned by the caller.
func (o *Object) Decode() (runtime.Object, error) {
	if o.Kind.Reach() {
		policies, err := o.Policies()
		if err != nil {
			return nil, err
		}
		return o.typed(nil, policies), nil
	}
	targets, err := o.Targets()
	if err != nil {
		return nil, err
	}
	return o.typed(targets, nil), nil
}

// typed returns the API object of o's kind with o's metadata (a copy) and
// the given list.
func (o *Object) typed(targets []v1alpha1.Target, policies []v1alpha1.ReachPolicy) runtime.Object {
	tm := metav1.TypeMeta{Kind: o.Kind.String(), APIVersion: v1alpha1.SchemeGroupVersion.String()}
	om := *o.ObjectMeta.DeepCopy()
	switch o.Kind {
	case KindClusterEffectivePolicy:
		return &v1alpha1.ClusterEffectivePolicy{TypeMeta: tm, ObjectMeta: om, Targets: targets}
	case KindPolicyReach:
		return &v1alpha1.PolicyReach{TypeMeta: tm, ObjectMeta: om, Policies: policies}
	case KindClusterPolicyReach:
		return &v1alpha1.ClusterPolicyReach{TypeMeta: tm, ObjectMeta: om, Policies: policies}
	}
	return &v1alpha1.EffectivePolicy{TypeMeta: tm, ObjectMeta: om, Targets: targets}
}

// TargetsOf returns the targets of an EffectivePolicy or
// ClusterEffectivePolicy, decoded or encoded.
func TargetsOf(obj runtime.Object) ([]v1alpha1.Target, error) {
	switch o := obj.(type) {
	case *Object:
		return o.Targets()
	case *v1alpha1.EffectivePolicy:
		return o.Targets, nil
	case *v1alpha1.ClusterEffectivePolicy:
		return o.Targets, nil
	}
	return nil, fmt.Errorf("encoded: unexpected object %T", obj)
}

// SummaryOf returns the Summary of an EffectivePolicy or
// ClusterEffectivePolicy in either form: kept with an Object, computed for a
// decoded one. The REST layer's table needs both: the API machinery hands
// its table convertor the Objects the REST layer returned, except in table
// watches, where it converts the decoded object (GetObject).
func SummaryOf(obj runtime.Object) (Summary, error) {
	switch o := obj.(type) {
	case *Object:
		if o.Summary != nil {
			return *o.Summary, nil
		}
		if o.Kind.Reach() {
			policies, err := o.Policies()
			return SummarizeReach(policies), err
		}
	case *v1alpha1.PolicyReach:
		return SummarizeReach(o.Policies), nil
	case *v1alpha1.ClusterPolicyReach:
		return SummarizeReach(o.Policies), nil
	}
	targets, err := TargetsOf(obj)
	return Summarize(targets), err
}

// GetObject implements runtime.CacheableObject: the decoded object, owned by
// the caller. It cannot fail for an Object this package built; should the
// bytes be unreadable all the same, the result has metadata and no targets
// (and the failure is in the log of whoever encodes it next).
func (o *Object) GetObject() runtime.Object {
	obj, err := o.Decode()
	if err != nil {
		return o.typed(nil, nil)
	}
	return obj
}

// appendJSON appends the object's JSON as encoding/json writes it: with
// kind and apiVersion when typed (a top-level object), without them as an
// item of a typed list (whose items carry no TypeMeta). The targets are
// decompressed straight into dst.
func (o *Object) appendJSON(dst []byte, typed bool) ([]byte, error) {
	meta, err := json.Marshal(&o.ObjectMeta)
	if err != nil {
		return dst, err
	}
	dst = append(dst, '{')
	if typed {
		dst = append(dst, `"kind":"`...)
		dst = append(dst, o.Kind.String()...)
		dst = append(dst, `","apiVersion":"`...)
		dst = append(dst, v1alpha1.SchemeGroupVersion.String()...)
		dst = append(dst, `",`...)
	}
	dst = append(dst, `"metadata":`...)
	dst = append(dst, meta...)
	if o.targets != nil {
		dst = append(dst, `,"`...)
		dst = append(dst, o.Kind.field()...)
		dst = append(dst, `":`...)
		if dst, err = o.appendTargets(dst); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// MarshalJSON writes the object with its kind and apiVersion (as the API
// does for a single object); it lets an Object be embedded where JSON is
// expected, e.g. the row objects of a Table.
func (o *Object) MarshalJSON() ([]byte, error) { return o.appendJSON(nil, true) }

// CacheEncode implements runtime.CacheableObject (see the package comment).
func (o *Object) CacheEncode(id runtime.Identifier, encode func(runtime.Object, io.Writer) error, w io.Writer) error {
	switch c := classify(id); c.kind {
	case plainJSON:
		buf, err := o.appendJSON(make([]byte, 0, 1024), true)
		if err != nil {
			return err
		}
		_, err = w.Write(append(buf, '\n')) // json.Encoder ends every value with one
		return err
	case prettyJSON:
		buf, err := o.appendJSON(make([]byte, 0, 1024), true)
		if err != nil {
			return err
		}
		_, err = w.Write((&indenter{}).write(make([]byte, 0, len(buf)*2), buf))
		return err
	case watchJSON:
		t, err := json.Marshal(c.eventType)
		if err != nil {
			return err
		}
		buf := append(make([]byte, 0, 1024), `{"type":`...)
		buf = append(buf, t...)
		buf = append(buf, `,"object":`...)
		if buf, err = o.appendJSON(buf, true); err != nil {
			return err
		}
		_, err = w.Write(append(buf, "}\n"...))
		return err
	case wrapping:
		// The watch encoder: hand it the Object, so that its embedded
		// encoder reaches the plainJSON case above.
		return encode(o, w)
	}
	return encode(o.GetObject(), w)
}

// Equal reports whether a and b are the same object: metadata (semantically,
// as apiequality compares it), scope, summary and compressed targets. The
// versioned store registers it in its content comparison (the targets are an
// unexported field, which reflection-based comparison refuses).
func Equal(a, b *Object) bool {
	return a.Kind == b.Kind && bytes.Equal(a.targets, b.targets) &&
		apiequality.Semantic.DeepEqual(a.ObjectMeta, b.ObjectMeta) &&
		apiequality.Semantic.DeepEqual(a.Summary, b.Summary)
}
