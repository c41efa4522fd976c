package measure

// The listed EffectivePolicies indexed by the policies they name as sources:
// which policy an edit, a review or a PolicyReach measures.

import (
	"encoding/json"
	"fmt"
	"sort"
)

// PolicyReach is one policy and the outputs that name it as a source whose
// values survive (Enforced or PartiallyEnforced): the outputs an edit of its
// spec must change.
type PolicyReach struct {
	ID       string // Kind namespace/name
	Kind     string
	NS, Name string
	Attached string // Kind/name[/section] of one attachment point
	Gateway  bool   // attached to a whole Gateway
	Keys     map[string]bool
	Named    int // outputs naming it as a source, any outcome
	namedSet map[string]bool
}

// OutputIndex is the listed EffectivePolicies: their names, the
// resourceVersion of the list, and the policies they name.
type OutputIndex struct {
	RV       string
	Names    []string // namespace/name of every EffectivePolicy
	policies map[string]*PolicyReach
}

// IndexOutputs indexes the body of a LIST of every EffectivePolicy.
func IndexOutputs(body []byte) (*OutputIndex, error) {
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []struct {
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
			Targets []struct {
				Policies []struct {
					Kind    string `json:"kind"`
					Sources []struct {
						Namespace  string `json:"namespace"`
						Name       string `json:"name"`
						Outcome    string `json:"outcome"`
						AttachedTo struct {
							Kind        string `json:"kind"`
							Name        string `json:"name"`
							SectionName string `json:"sectionName"`
						} `json:"attachedTo"`
					} `json:"sources"`
				} `json:"policies"`
			} `json:"targets"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, err
	}
	idx := &OutputIndex{RV: l.Metadata.ResourceVersion, policies: map[string]*PolicyReach{}}
	for _, it := range l.Items {
		key := it.Metadata.Namespace + "/" + it.Metadata.Name
		idx.Names = append(idx.Names, key)
		for _, t := range it.Targets {
			for _, p := range t.Policies {
				for _, s := range p.Sources {
					id := p.Kind + " " + s.Namespace + "/" + s.Name
					pr := idx.policies[id]
					if pr == nil {
						a := s.AttachedTo.Kind + "/" + s.AttachedTo.Name
						if s.AttachedTo.SectionName != "" {
							a += "/" + s.AttachedTo.SectionName
						}
						pr = &PolicyReach{ID: id, Kind: p.Kind, NS: s.Namespace, Name: s.Name, Attached: a,
							Gateway: s.AttachedTo.Kind == "Gateway" && s.AttachedTo.SectionName == "",
							Keys:    map[string]bool{}, namedSet: map[string]bool{}}
						idx.policies[id] = pr
					}
					pr.namedSet[key] = true
					if s.Outcome == "Enforced" || s.Outcome == "PartiallyEnforced" {
						pr.Keys[key] = true
					}
				}
			}
		}
	}
	for _, pr := range idx.policies {
		pr.Named, pr.namedSet = len(pr.namedSet), nil
	}
	sort.Strings(idx.Names)
	return idx, nil
}

// PickPolicies picks the Gateway-level policy of median reach, and the policy
// (any level) of the smallest reach of at least 200 outputs. Ties by id, so the
// choice is reproducible for a given topology.
func (idx *OutputIndex) PickPolicies() (gw, near *PolicyReach) {
	var all, gws []*PolicyReach
	for _, p := range idx.policies {
		all = append(all, p)
		if p.Gateway {
			gws = append(gws, p)
		}
	}
	byReach := func(s []*PolicyReach) {
		sort.Slice(s, func(i, j int) bool {
			if len(s[i].Keys) != len(s[j].Keys) {
				return len(s[i].Keys) < len(s[j].Keys)
			}
			return s[i].ID < s[j].ID
		})
	}
	byReach(gws)
	if len(gws) > 0 {
		gw = gws[len(gws)/2]
	}
	// The smallest reach of at least 200 (so the target is not met by a
	// smaller edit); the largest when none reaches 200.
	byReach(all)
	for _, p := range all {
		if len(p.Keys) >= 200 {
			return gw, p
		}
	}
	if len(all) > 0 {
		near = all[len(all)-1]
	}
	return gw, near
}

// MostReaching is the policy that the most outputs name as a source.
func MostReaching(idx *OutputIndex) (*PolicyReach, error) {
	var top *PolicyReach
	for _, p := range idx.policies {
		if top == nil || p.Named > top.Named || p.Named == top.Named && p.ID < top.ID {
			top = p
		}
	}
	if top == nil {
		return nil, fmt.Errorf("no policy in the outputs")
	}
	return top, nil
}
