package compute

// Semantics profiles (SPEC §4.1): a policy kind belongs to an implementation, and where that
// implementation's rules differ from the generic GEP fold, its rules decide what the
// EffectivePolicy says. Everything a profile decides goes through the profile interface below;
// the rest of the engine (contexts, via, fieldSources, outcomes) is the same for every profile.
//
// Each profile lives in its own file: profile_gep.go (SPEC §5 as written, the default),
// profile_envoygateway.go, profile_kuadrant.go, profile_nginx.go.

import (
	"fmt"
	"sort"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
)

// Semantics names, as descriptors write them.
const (
	SemanticsGEP                = "GEP"
	SemanticsEnvoyGateway       = "EnvoyGateway"
	SemanticsKuadrant           = "Kuadrant"
	SemanticsNGINXGatewayFabric = "NGINXGatewayFabric"
)

// profile is what one implementation enforces.
type profile interface {
	// name is the profile's semantics name.
	name() string
	// mergeSchema compiles what merging needs of the schema of a stanza of policy kind kind
	// (s may be nil), for an entry that names strategy named (lower case, "" for none):
	// which lists merge item by item on which keys, which objects are replaced whole.
	mergeSchema(kind string, s *apiextv1.JSONSchemaProps, named string) *merge.Schema
	// reportedStrategy is the mergeStrategy a source entry reports.
	reportedStrategy(e *entry) v1alpha1.MergeStrategy
	// flavor tells apart targets whose contexts the profile folds differently although they
	// traverse the same policy-bearing nodes; "" when the profile never does. It is part of
	// the memo key of a fold.
	flavor(kind string, target nodeID) string
	// fold merges the entries of one context of an Inherited kind, established first (SPEC
	// §5.2), for targets of the given flavor.
	fold(es []foldEntry, flavor string) foldValue
	// direct picks, among the policies of a Direct kind attached to one target or section
	// (established first, never empty), those that take effect; every other one is
	// Conflicted (beaten by its rejectedBy when set, else by the first winner). The winners'
	// specs are merged in order; there may be none when every candidate was rejected.
	direct(cands []*policy) []*policy
	// reaches says whether policies of kind kind can take effect at target at all.
	reaches(kind string, target nodeID) bool
	// unnamedRuleSections says whether a sectionName rule-<index+1> addresses a route's
	// unnamed rule (Gateway API addresses rules by name only).
	unnamedRuleSections() bool
	// rule names the implementation's rule for source messages ("" for GEP).
	rule(kind string) string
}

// reachLimiter is implemented by a profile whose reaches is false somewhere for kind: the
// engine then lists only the keys where it is true (a kind that reaches nothing of an object
// gives it no output).
type reachLimiter interface {
	limitsReach(kind string) bool
}

// foldValue is a profile's fold of one context.
type foldValue struct {
	// acc is the merged spec; each leaf names the index of the entry that set it.
	acc *merge.Value
	// totals, when set, is the number of leaves of each entry as the profile built it (an
	// entry a profile builds with another schema than at parse time has other leaves); nil
	// means each entry's parsed count.
	totals []int
	// conflictedBy, when set, names for each entry the policy that beat it whole under a
	// same-target rule (on this target or, for a whole-policy rule, on another), or nil.
	conflictedBy []*policy
}

// wholePolicyRejecter is implemented by a profile whose same-target rule rejects a policy
// everywhere once it loses on one target (NGINX Gateway Fabric's Valid is a property of the
// whole policy). The state keeps the answer in policy.rejectedBy (rejections.go).
type wholePolicyRejecter interface {
	// rejections returns, for the policies of kind kind attached at the nodes of at, the
	// policy that beat each rejected one.
	rejections(kind string, at map[nodeID][]*policy) map[*policy]*policy
}

var profiles = map[string]profile{
	SemanticsGEP:                gepProfile{},
	SemanticsEnvoyGateway:       envoyGatewayProfile{},
	SemanticsKuadrant:           kuadrantProfile{},
	SemanticsNGINXGatewayFabric: nginxProfile{},
}

// profileOf returns the profile a descriptor names (GEP when it names none).
func profileOf(d *Descriptor) profile {
	if p, ok := profiles[d.Semantics]; ok {
		return p
	}
	return gepProfile{}
}

func validSemantics(s string) error {
	if s == "" {
		return nil
	}
	if _, ok := profiles[s]; ok {
		return nil
	}
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return fmt.Errorf("semantics must be one of %s, not %q", strings.Join(names, ", "), s)
}

// sameTargetWinners marks, at every node of the context, every entry of a policy other than
// the node's oldest as beaten by the oldest's first entry (Envoy Gateway's rule for two
// policies on one target). It returns nil when no node has two policies.
func sameTargetWinners(es []foldEntry) []*policy {
	var out []*policy
	first := map[nodeID]int{}
	for i := range es {
		j, seen := first[es[i].node]
		if !seen {
			first[es[i].node] = i
			continue
		}
		if es[j].pol == es[i].pol {
			continue
		}
		if out == nil {
			out = make([]*policy, len(es))
		}
		out[i] = es[j].pol
	}
	return out
}
