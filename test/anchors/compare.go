package anchors

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/kuadrant/policy-machinery/machinery"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// RuleContext is one effective policy of one kind at one route rule in one
// context, in a shape both sides can be read into: this project's
// EffectiveSpec entries of an HTTPRoute target, policy-machinery's
// effective policy of one path.
type RuleContext struct {
	Kind string
	Rule string // "namespace/route#rule"
	// Via lists the nodes bearing a policy of Kind along the path, least
	// specific first ("Gateway:ns/name#listener", ...), as our via does.
	Via string
	// Spec is the merged spec as JSON, list-map items sorted by name (the
	// two sides keep them in different orders).
	Spec string
	// Sources are the policies ("namespace/name") with a value in Spec.
	Sources string
}

// Key identifies a context.
func (c RuleContext) Key() string { return c.Kind + " " + c.Rule + " " + c.Via }

// OursRuleContexts reads the contexts of every route rule from our outputs:
// a rule's entries are those with its sectionName or, when it has none, the
// route's own (an entry gets a sectionName only where a policy is attached
// to the rule). rules lists each route's rule names by "namespace/route".
func OursRuleContexts(keys []compute.Key, outs []kruntime.Object, rules map[string][]string) ([]RuleContext, error) {
	var out []RuleContext
	for i, o := range outs {
		ep, ok := o.(*v1alpha1.EffectivePolicy)
		if !ok {
			continue
		}
		route := keys[i].Namespace + "/" + keys[i].Name
		for _, t := range ep.Targets {
			if t.Kind != "HTTPRoute" {
				continue
			}
			for _, tp := range t.Policies {
				for _, rule := range rules[route] {
					entries := sectionEntries(tp.Effective, rule)
					for _, e := range entries {
						c, err := oursContext(tp.Kind, route+"#"+rule, e)
						if err != nil {
							return nil, err
						}
						out = append(out, c)
					}
				}
			}
		}
	}
	return out, nil
}

func sectionEntries(all []v1alpha1.EffectiveSpec, section string) []v1alpha1.EffectiveSpec {
	var own, whole []v1alpha1.EffectiveSpec
	for _, e := range all {
		switch e.SectionName {
		case section:
			own = append(own, e)
		case "":
			whole = append(whole, e)
		}
	}
	if len(own) > 0 {
		return own
	}
	return whole
}

func oursContext(kind, rule string, e v1alpha1.EffectiveSpec) (RuleContext, error) {
	var via []string
	for _, r := range e.Via {
		via = append(via, nodeName(r.Kind, r.Namespace, r.Name, r.SectionName))
	}
	var spec map[string]interface{}
	if err := json.Unmarshal(e.Spec.Raw, &spec); err != nil {
		return RuleContext{}, fmt.Errorf("%s %s: %w", kind, rule, err)
	}
	sources := map[string]bool{}
	for _, s := range e.FieldSources {
		sources[s] = true
	}
	return RuleContext{Kind: kind, Rule: rule, Via: strings.Join(via, ">"), Spec: canonicalSpec(spec), Sources: joinSet(sources)}, nil
}

// PMRuleContexts reads policy-machinery's effective policies into contexts;
// skip drops the paths the caller knows the sides differ on.
func PMRuleContexts(eff Effective, skip func(path []machinery.Targetable) bool) []RuleContext {
	var out []RuleContext
	for kind, byPath := range eff {
		for _, pe := range byPath {
			if skip != nil && skip(pe.Path) {
				continue
			}
			var via []string
			for _, t := range pe.Path {
				if policiesOfKind(t, kind) > 0 {
					via = append(via, targetableName(t))
				}
			}
			spec := map[string]interface{}{}
			sources := map[string]bool{}
			for id, r := range pe.Policy.Rules() {
				field, _, item := strings.Cut(id, "/")
				if item {
					l, _ := spec[field].([]interface{})
					spec[field] = append(l, r.Value)
				} else {
					spec[field] = r.Value
				}
				_, nsName, _ := strings.Cut(r.Source, ":")
				sources[nsName] = true
			}
			// Through JSON, so that numbers compare as ours (float64).
			var norm map[string]interface{}
			b, _ := json.Marshal(spec)
			_ = json.Unmarshal(b, &norm)
			out = append(out, RuleContext{
				Kind: kind, Rule: targetableName(pe.Path[len(pe.Path)-1])[len("HTTPRoute:"):],
				Via: strings.Join(via, ">"), Spec: canonicalSpec(norm), Sources: joinSet(sources),
			})
		}
	}
	return out
}

func policiesOfKind(t machinery.Targetable, kind string) int {
	n := 0
	for _, p := range t.Policies() {
		if po, ok := p.(*Policy); ok && po.Kind == kind {
			n++
		}
	}
	return n
}

// targetableName names a targetable as nodeName names our via entries:
// listeners and route rules are sections of their Gateway and route.
func targetableName(t machinery.Targetable) string {
	switch t := t.(type) {
	case *machinery.Listener:
		return nodeName("Gateway", t.Gateway.Namespace, t.Gateway.Name, string(t.Name))
	case *machinery.HTTPRouteRule:
		return nodeName("HTTPRoute", t.HTTPRoute.Namespace, t.HTTPRoute.Name, string(t.Name))
	case *machinery.ServicePort:
		return nodeName("Service", t.Service.Namespace, t.Service.Name, t.Name)
	}
	return nodeName(t.GroupVersionKind().Kind, t.GetNamespace(), t.GetName(), "")
}

func nodeName(kind, ns, name, section string) string {
	s := kind + ":" + name
	if ns != "" {
		s = kind + ":" + ns + "/" + name
	}
	if section != "" {
		s += "#" + section
	}
	return s
}

// canonicalSpec encodes a spec with its lists of named items sorted by name.
func canonicalSpec(spec map[string]interface{}) string {
	for _, v := range spec {
		l, ok := v.([]interface{})
		if !ok {
			continue
		}
		sort.SliceStable(l, func(i, j int) bool { return itemName(l[i]) < itemName(l[j]) })
	}
	b, _ := json.Marshal(spec) // map keys are sorted
	return string(b)
}

func itemName(v interface{}) string {
	m, _ := v.(map[string]interface{})
	s, _ := m["name"].(string)
	return s
}

func joinSet(m map[string]bool) string {
	var l []string
	for k := range m {
		l = append(l, k)
	}
	sort.Strings(l)
	return strings.Join(l, ",")
}
