package access

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/klog/v2"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// DefaultCacheTTL is how long an access decision is reused.
const DefaultCacheTTL = 10 * time.Second

// maxDecisions bounds the decision cache; when it is full, expired entries
// are dropped, and if that is not enough, all of them.
const maxDecisions = 10000

// Checker answers "may this user get this resource in this namespace?" for
// the parts of an answer that depend on the caller (sensitive fields, the
// targets of a PolicyReach), with the server's (delegated) authorizer: a
// SubjectAccessReview per user, groups, resource and namespace, cached for
// a short TTL. It is safe for concurrent use.
type Checker struct {
	authz authorizer.Authorizer
	ttl   time.Duration
	now   func() time.Time

	mu        sync.Mutex
	decisions map[string]decision
}

type decision struct {
	allowed bool
	expires time.Time
}

// NewChecker returns a Checker deciding with authz; ttl <= 0 means
// DefaultCacheTTL.
func NewChecker(authz authorizer.Authorizer, ttl time.Duration) *Checker {
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	return &Checker{authz: authz, ttl: ttl, now: time.Now, decisions: map[string]decision{}}
}

// Allowed reports whether u may get gr in namespace ns ("" = in every
// namespace, or a cluster-scoped resource). A nil user, and a failed check,
// are denied.
func (a *Checker) Allowed(ctx context.Context, u user.Info, gr schema.GroupResource, ns string) bool {
	if u == nil {
		return false
	}
	key := decisionKey(u, gr, ns)
	now := a.now()
	a.mu.Lock()
	d, ok := a.decisions[key]
	a.mu.Unlock()
	if ok && now.Before(d.expires) {
		return d.allowed
	}
	dec, reason, err := a.authz.Authorize(ctx, authorizer.AttributesRecord{
		User:            u,
		Verb:            "get",
		Namespace:       ns,
		APIGroup:        gr.Group,
		Resource:        gr.Resource,
		ResourceRequest: true,
	})
	if err != nil {
		// Deny, and ask again next time.
		klog.V(2).InfoS("Access check failed; denying", "user", u.GetName(), "resource", gr, "namespace", ns, "reason", reason, "err", err)
		return false
	}
	allowed := dec == authorizer.DecisionAllow
	a.mu.Lock()
	if len(a.decisions) >= maxDecisions {
		for k, d := range a.decisions {
			if !now.Before(d.expires) {
				delete(a.decisions, k)
			}
		}
		if len(a.decisions) >= maxDecisions {
			a.decisions = map[string]decision{}
		}
	}
	a.decisions[key] = decision{allowed: allowed, expires: now.Add(a.ttl)}
	a.mu.Unlock()
	return allowed
}

var (
	effectivePolicies        = v1alpha1.Resource("effectivepolicies")
	clusterEffectivePolicies = v1alpha1.Resource("clustereffectivepolicies")
)

// EffectivePolicyVisible reports whether u may get the EffectivePolicies
// of namespace ns ("": the ClusterEffectivePolicies), which decides whether
// an answer may name objects there. A nil Checker (no authorizer) lets
// everyone see everything.
func (a *Checker) EffectivePolicyVisible(ctx context.Context, u user.Info, ns string) bool {
	if a == nil {
		return true
	}
	if ns == "" {
		return a.Allowed(ctx, u, clusterEffectivePolicies, "")
	}
	return a.Allowed(ctx, u, effectivePolicies, ns)
}

// decisionKey identifies an access decision: the user (name, uid, groups,
// extra, which authorizers may look at) and what is asked.
func decisionKey(u user.Info, gr schema.GroupResource, ns string) string {
	var b strings.Builder
	q := func(s string) { b.WriteString(strconv.Quote(s)); b.WriteByte(' ') }
	q(u.GetName())
	q(u.GetUID())
	groups := append([]string(nil), u.GetGroups()...)
	sort.Strings(groups)
	for _, g := range groups {
		q(g)
	}
	b.WriteString("| ")
	extra := u.GetExtra()
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		q(k)
		for _, v := range extra[k] {
			q(v)
		}
		b.WriteString("; ")
	}
	b.WriteString("| ")
	q(gr.Group)
	q(gr.Resource)
	q(ns)
	return b.String()
}
