package access

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/jsonpointer"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

// Redacted replaces the value of a sensitive field the caller may not see.
const Redacted = "<redacted>"

// SensitiveKind describes the sensitive fields of one policy kind.
type SensitiveKind struct {
	// Resource is what the caller must be allowed to "get" (in the source
	// policy's namespace) to see the values.
	Resource schema.GroupResource
	// Paths are JSON pointers into the spec proper; each covers its subtree.
	Paths []string
}

// SensitiveFields tells the Redactor which policy kinds have sensitive
// fields (the live layer answers from the engine's descriptors and CRDs).
type SensitiveFields interface {
	// SensitiveKind returns the sensitive fields of a policy kind; ok=false
	// when it has none.
	SensitiveKind(gk schema.GroupKind) (SensitiveKind, bool)
}

// Redactor replaces the values of sensitive fields in EffectivePolicy
// objects (held as *encoded.Object, and returned in that form) by Redacted for callers that may not get the policy kind in the
// namespace of the policy that set them. Decisions come from the server's
// (delegated) authorizer, a SubjectAccessReview per user, groups, resource
// and namespace, cached for a short TTL.
type Redactor struct {
	access *Checker
	fields SensitiveFields
}

// NewRedactor returns a Redactor deciding with authz about the kinds fields
// knows; ttl <= 0 means DefaultCacheTTL.
func NewRedactor(authz authorizer.Authorizer, fields SensitiveFields, ttl time.Duration) *Redactor {
	return NewRedactorWith(NewChecker(authz, ttl), fields)
}

// NewRedactorWith returns a Redactor deciding with access (whose cache it
// shares with whoever else uses it) about the kinds fields knows.
func NewRedactorWith(access *Checker, fields SensitiveFields) *Redactor {
	return &Redactor{access: access, fields: fields}
}

// ForRequest returns the redaction function for the caller of ctx (a
// watch keeps it for its life; decisions still expire). A nil Redactor
// redacts nothing.
func (r *Redactor) ForRequest(ctx context.Context) func(*encoded.Object) *encoded.Object {
	if r == nil {
		return func(o *encoded.Object) *encoded.Object { return o }
	}
	u, _ := genericapirequest.UserFrom(ctx)
	return func(o *encoded.Object) *encoded.Object { return r.Redact(ctx, u, o) }
}

// Redact returns o with the sensitive values u may not see replaced: o
// itself when there are none, else a new Object (o is never modified). A
// nil user sees no sensitive value.
//
// Most outputs name no policy kind with sensitive fields (their summary
// says so): those are returned as they are, without decoding. The others
// have their targets decoded, redacted and encoded again, so that the REST
// layer serves one form, redacted or not.
func (r *Redactor) Redact(ctx context.Context, u user.Info, o *encoded.Object) *encoded.Object {
	if !r.mayHide(o.Summary) {
		return o
	}
	targets, err := o.Targets()
	if err != nil {
		// Unreadable bytes: serving o fails the request (the encoder meets
		// the same error), which shows nothing.
		return o
	}
	// targets is o's decoded copy, the caller's to edit.
	redacted := r.redactInPlace(ctx, u, targets)
	if !redacted {
		return o
	}
	out, err := o.WithTargets(targets)
	if err != nil {
		// Cannot happen (redactSpec writes valid JSON, the rest was encoded
		// before); should it all the same, show no target rather than a
		// sensitive value.
		klog.ErrorS(err, "Encoding a redacted output failed; serving it without targets", "namespace", o.Namespace, "name", o.Name)
		out, _ = o.WithTargets(nil)
	}
	return out
}

// RedactTargets returns decoded targets as u may see them, as Redact does
// for an encoded output. targets is not modified: when something is hidden,
// the answer is a copy. Targets naming no policy kind with sensitive fields
// (most) are returned as they are, after a scan of their policy kinds.
func (r *Redactor) RedactTargets(ctx context.Context, u user.Info, targets []v1alpha1.Target) []v1alpha1.Target {
	if r == nil || !r.anySensitive(targets) {
		return targets
	}
	out := make([]v1alpha1.Target, len(targets))
	for i := range targets {
		targets[i].DeepCopyInto(&out[i])
	}
	r.redactInPlace(ctx, u, out)
	return out
}

// anySensitive reports whether targets name a policy kind with sensitive
// fields.
func (r *Redactor) anySensitive(targets []v1alpha1.Target) bool {
	for _, t := range targets {
		for _, p := range t.Policies {
			if r.sensitive(schema.GroupKind{Group: p.Group, Kind: p.Kind}) {
				return true
			}
		}
	}
	return false
}

// sensitive reports whether policy kind gk has sensitive fields.
func (r *Redactor) sensitive(gk schema.GroupKind) bool {
	sk, ok := r.fields.SensitiveKind(gk)
	return ok && len(sk.Paths) > 0
}

// redactInPlace replaces, in targets, the sensitive values u may not see,
// and reports whether it replaced any.
func (r *Redactor) redactInPlace(ctx context.Context, u user.Info, targets []v1alpha1.Target) bool {
	redacted := false
	for ti := range targets {
		for pi := range targets[ti].Policies {
			tp := &targets[ti].Policies[pi]
			sk, ok := r.fields.SensitiveKind(schema.GroupKind{Group: tp.Group, Kind: tp.Kind})
			if !ok || len(sk.Paths) == 0 {
				continue
			}
			for ei := range tp.Effective {
				ptrs := r.hidden(ctx, u, sk, tp.Effective[ei].FieldSources)
				if len(ptrs) == 0 {
					continue
				}
				tp.Effective[ei].Spec.Raw = redactSpec(tp.Effective[ei].Spec.Raw, ptrs)
				tp.Effective[ei].Spec.Object = nil
				redacted = true
			}
		}
	}
	return redacted
}

// mayHide reports whether an output with this summary names a policy kind
// with sensitive fields (nil: unknown, so yes).
func (r *Redactor) mayHide(s *encoded.Summary) bool {
	if s == nil {
		return true
	}
	for _, gk := range s.PolicyGroupKinds {
		if r.sensitive(gk) {
			return true
		}
	}
	return false
}

// hidden returns the leaf pointers of fieldSources that are sensitive and
// whose source policy u may not get.
func (r *Redactor) hidden(ctx context.Context, u user.Info, sk SensitiveKind, fieldSources map[string]string) []string {
	var ptrs []string
	keys := make([]string, 0, len(fieldSources))
	for ptr := range fieldSources {
		keys = append(keys, ptr)
	}
	sort.Strings(keys) // deterministic order of the access checks
	for _, ptr := range keys {
		src := fieldSources[ptr]
		if ptr == "" || !covered(ptr, sk.Paths) { // "": an empty spec holds nothing
			continue
		}
		ns := ""
		if i := strings.Index(src, "/"); i >= 0 {
			ns = src[:i] // "namespace/name"; a cluster-scoped policy is "name"
		}
		if !r.access.Allowed(ctx, u, sk.Resource, ns) {
			ptrs = append(ptrs, ptr)
		}
	}
	return ptrs
}

// covered reports whether leaf pointer ptr lies in a sensitive subtree, or
// holds one (a list replaced whole that a sensitive pointer points into).
func covered(ptr string, paths []string) bool {
	for _, p := range paths {
		if ptr == p || strings.HasPrefix(ptr, p+"/") || strings.HasPrefix(p, ptr+"/") {
			return true
		}
	}
	return false
}

// redactSpec replaces the values at ptrs in the JSON document raw by
// Redacted. A pointer that does not resolve is ignored; a document that does
// not decode is replaced whole (never leak what cannot be inspected).
func redactSpec(raw []byte, ptrs []string) []byte {
	var v interface{}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return []byte(`"` + Redacted + `"`)
	}
	for _, p := range ptrs {
		v = setPointer(v, p)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false) // "<redacted>", not "\u003credacted\u003e"
	if err := enc.Encode(v); err != nil {
		return []byte(`"` + Redacted + `"`)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

// setPointer sets the value at JSON pointer p in v to Redacted.
func setPointer(v interface{}, p string) interface{} {
	if p == "" {
		return Redacted
	}
	toks := jsonpointer.Tokens(p)
	cur := v
	for i, tok := range toks {
		last := i == len(toks)-1
		switch c := cur.(type) {
		case map[string]interface{}:
			next, ok := c[tok]
			if !ok {
				return v
			}
			if last {
				c[tok] = Redacted
				return v
			}
			cur = next
		case []interface{}:
			idx, err := strconv.Atoi(tok)
			if err != nil || idx < 0 || idx >= len(c) {
				return v
			}
			if last {
				c[idx] = Redacted
				return v
			}
			cur = c[idx]
		default:
			return v
		}
	}
	return v
}
