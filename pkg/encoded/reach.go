package encoded

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// ReachSummary is what the table printer and the access filter need of a
// PolicyReach without decoding its policies.
type ReachSummary struct {
	// Counts are the policies' summaries added up (hidden targets included).
	Counts v1alpha1.ReachSummary `json:"counts"`
	// Namespaces are the distinct namespaces of the targets reached or
	// named, sorted; "" stands for cluster-scoped targets. The access filter decodes an
	// object only when the caller may not read one of them.
	Namespaces []string `json:"namespaces,omitempty"`
}

// SummarizeReach computes the Summary of a reach's policies.
func SummarizeReach(policies []v1alpha1.ReachPolicy) Summary {
	var s Summary
	r := &ReachSummary{}
	kinds := make([]string, 0, len(policies))
	var assumed []string
	seenNS := map[string]bool{}
	for i := range policies {
		p := &policies[i]
		kinds = append(kinds, p.Kind)
		if p.Semantics == v1alpha1.SemanticsAssumed {
			assumed = append(assumed, p.Kind)
		}
		c := &r.Counts
		c.Targets += p.Summary.Targets
		c.Enforced += p.Summary.Enforced
		c.PartiallyEnforced += p.Summary.PartiallyEnforced
		c.Overridden += p.Summary.Overridden
		c.Conflicted += p.Summary.Conflicted
		c.Invalid += p.Summary.Invalid
		for j := range p.Reaches {
			if ns := p.Reaches[j].Target.Namespace; !seenNS[ns] {
				seenNS[ns] = true
				r.Namespaces = append(r.Namespaces, ns)
			}
		}
		for j := range p.AttachedTo {
			if ns := p.AttachedTo[j].Target.Namespace; !seenNS[ns] {
				seenNS[ns] = true
				r.Namespaces = append(r.Namespaces, ns)
			}
		}
	}
	sort.Strings(kinds)
	sort.Strings(assumed)
	sort.Strings(r.Namespaces)
	s.PolicyKinds = strings.Join(kinds, ",")
	s.AssumedKinds = strings.Join(assumed, ",")
	s.Policies = int64(len(policies))
	s.Reach = r
	return s
}

func withPolicies(om metav1.ObjectMeta, kind Kind, policies []v1alpha1.ReachPolicy) (*Object, error) {
	s := SummarizeReach(policies)
	if len(policies) == 0 {
		return &Object{ObjectMeta: om, Kind: kind, Summary: &s}, nil
	}
	buf := encodeBufs.Get().(*[]byte)
	data := appendPolicies((*buf)[:0], policies)
	return compressed(om, kind, &s, buf, data), nil
}

// appendPolicies writes policies as json.Marshal does (TestObjectsWriteEveryField
// holds it to that), into a reused buffer: the reach of a GatewayClass policy
// is tens of megabytes of JSON, and json.Marshal's growing buffers were most
// of the garbage of building every reach at start-up.
func appendPolicies(dst []byte, policies []v1alpha1.ReachPolicy) []byte {
	dst = append(dst, '[')
	for i := range policies {
		if i > 0 {
			dst = append(dst, ',')
		}
		p := &policies[i]
		dst = appendKindHead(dst, p.Group, p.Kind, p.Class, p.Semantics)
		if len(p.AttachedTo) > 0 {
			dst = append(dst, `,"attachedTo":[`...)
			for j := range p.AttachedTo {
				if j > 0 {
					dst = append(dst, ',')
				}
				a := &p.AttachedTo[j]
				dst = append(dst, `{"target":`...)
				dst = appendRef(dst, &a.Target)
				dst = append(dst, `,"resolved":`...)
				dst = strconv.AppendBool(dst, a.Resolved)
				if a.Reason != "" {
					dst = append(dst, `,"reason":`...)
					dst = appendString(dst, string(a.Reason))
				}
				if a.Message != "" {
					dst = append(dst, `,"message":`...)
					dst = appendString(dst, a.Message)
				}
				dst = append(dst, '}')
			}
			dst = append(dst, ']')
		}
		c := &p.Summary
		dst = append(dst, `,"summary":{"targets":`...)
		dst = strconv.AppendInt(dst, int64(c.Targets), 10)
		for _, n := range []struct {
			name string
			v    int32
		}{{"enforced", c.Enforced}, {"partiallyEnforced", c.PartiallyEnforced}, {"overridden", c.Overridden}, {"conflicted", c.Conflicted}, {"invalid", c.Invalid}} {
			dst = append(dst, `,"`...)
			dst = append(dst, n.name...)
			dst = append(dst, `":`...)
			dst = strconv.AppendInt(dst, int64(n.v), 10)
		}
		dst = append(dst, `},"hiddenTargets":`...)
		dst = strconv.AppendInt(dst, int64(p.HiddenTargets), 10)
		if len(p.Reaches) > 0 {
			dst = append(dst, `,"reaches":[`...)
			for j := range p.Reaches {
				if j > 0 {
					dst = append(dst, ',')
				}
				r := &p.Reaches[j]
				dst = append(dst, `{"target":`...)
				dst = appendRef(dst, &r.Target)
				dst = append(dst, `,"attachedTo":`...)
				dst = appendRef(dst, &r.AttachedTo)
				dst = append(dst, `,"stanza":`...)
				dst = appendString(dst, string(r.Stanza))
				dst = append(dst, `,"outcome":`...)
				dst = appendString(dst, string(r.Outcome))
				if r.Message != "" {
					dst = append(dst, `,"message":`...)
					dst = appendString(dst, r.Message)
				}
				dst = append(dst, '}')
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// WithPolicies returns a reach Object with o's metadata (its own copy) and
// kind holding policies instead of o's: the access filter's way back to
// this form after it removed what the caller may not see. o is not
// modified.
func (o *Object) WithPolicies(policies []v1alpha1.ReachPolicy) (*Object, error) {
	if !o.Kind.Reach() {
		return nil, fmt.Errorf("encoded: %s has no policies", o.Kind)
	}
	return withPolicies(*o.ObjectMeta.DeepCopy(), o.Kind, policies)
}

// Policies decodes the policies of a PolicyReach or ClusterPolicyReach.
func (o *Object) Policies() ([]v1alpha1.ReachPolicy, error) {
	if !o.Kind.Reach() {
		return nil, fmt.Errorf("encoded: %s has no policies", o.Kind)
	}
	data, err := o.TargetsJSON()
	if err != nil || data == nil {
		return nil, err
	}
	var policies []v1alpha1.ReachPolicy
	if err := json.Unmarshal(data, &policies); err != nil {
		return nil, fmt.Errorf("encoded: decoding %s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
	}
	return policies, nil
}

// ReachSummaryOf returns the ReachSummary of a PolicyReach or
// ClusterPolicyReach in either form (see SummaryOf).
func ReachSummaryOf(obj runtime.Object) (ReachSummary, error) {
	s, err := SummaryOf(obj)
	if err != nil {
		return ReachSummary{}, err
	}
	if s.Reach == nil {
		return ReachSummary{}, fmt.Errorf("encoded: %T is not a policy reach", obj)
	}
	return *s.Reach, nil
}
