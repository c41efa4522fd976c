package encoded

import (
	"encoding/json"
	"fmt"
	"sort"
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
	seenNS := map[string]bool{}
	for i := range policies {
		p := &policies[i]
		kinds = append(kinds, p.Kind)
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
	sort.Strings(r.Namespaces)
	s.PolicyKinds = strings.Join(kinds, ",")
	s.Policies = int64(len(policies))
	s.Reach = r
	return s
}

func withPolicies(om metav1.ObjectMeta, kind Kind, policies []v1alpha1.ReachPolicy) (*Object, error) {
	s := SummarizeReach(policies)
	if len(policies) == 0 {
		return &Object{ObjectMeta: om, Kind: kind, Summary: &s}, nil
	}
	data, err := json.Marshal(policies)
	if err != nil {
		return nil, err
	}
	buf := encodeBufs.Get().(*[]byte)
	return compressed(om, kind, &s, buf, data), nil
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
