package nginx

// How the policies of one context add up, from nginx-gateway-fabric v2.6.7 and NGINX's own
// merge of each directive:
//
//   - internal/controller/state/dataplane/configuration.go buildPolicies writes every accepted
//     policy of a target into that target's NGINX block (a Gateway's into the http block or its
//     servers, a route's into the route's locations), so the policies on one node add up there;
//     the same-target rule (Rejections) keeps two of them from setting one directive, except
//     where the directive may repeat (limit_req per rate limit rule, one include per snippet);
//   - NGINX then inherits each directive separately from the enclosing block into a block that
//     does not set it, so a route's directive replaces the Gateway's for that directive only.
//     The exceptions are array directives such as limit_req, inherited all together, and only
//     into a block that has none of its own (ngx_http_limit_req_module.c
//     ngx_http_limit_req_merge_conf: "if (conf->limits.elts == NULL) conf->limits =
//     prev->limits"), and flags NGINX Gateway Fabric writes only when true
//     (policies/ratelimit/generator.go: limit_req_dry_run on), which a false below never turns off.

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// inheritance says how a kind's fields that are not one plain directive each inherit.
type inheritance struct {
	// appended are lists whose items are each a directive (or an include) the policies on one
	// node all write into the block; their items never merge.
	appended []string
	// perBlock are lists a block that has any item of its own inherits nothing of.
	perBlock []string
	// onlyTrue are flags written into the block only when true: a false inherits from above.
	onlyTrue []string
}

// kindInheritance is the inheritance of each kind whose fields are not all plain directives.
var kindInheritance = map[string]inheritance{
	"RateLimitPolicy": {
		appended: []string{"rateLimit.local.rules"},
		perBlock: []string{"rateLimit.local.rules"},
		onlyTrue: []string{"rateLimit.dryRun"},
	},
	"SnippetsPolicy": {appended: []string{"snippets"}},
}

// noItemKey is the list-map key of the appended lists: no item has it, so merging two such lists
// keeps every item of both, in order (merge.Patch appends items without a key).
const noItemKey = "\x00"

// Fold (semantics.Profile): on each node the policies not rejected add up (older first, a newer
// one's fields on top); then, from the most specific node up, each less specific block gives what
// the more specific one does not set, as NGINX inherits directives.
func (Profile) Fold(es []semantics.FoldEntry, _ string) semantics.FoldValue {
	var live []int
	var conflicts []*semantics.Policy
	for i := range es {
		if by := es[i].Policy.RejectedBy; by != nil {
			if conflicts == nil {
				conflicts = make([]*semantics.Policy, len(es))
			}
			conflicts[i] = by
			continue
		}
		live = append(live, i)
	}
	if len(live) == 0 {
		return semantics.FoldValue{ConflictedBy: conflicts} // every entry rejected: nothing applies
	}
	return semantics.FoldValue{Acc: foldBlocks(es, live), ConflictedBy: conflicts}
}

// foldBlocks folds the entries of es at the indices live (established first).
func foldBlocks(es []semantics.FoldEntry, live []int) *merge.Value {
	var order []topology.NodeID
	blocks := map[topology.NodeID]*merge.Value{}
	for _, i := range live {
		n := es[i].Node
		if _, ok := blocks[n]; !ok {
			order = append(order, n)
		}
		blocks[n] = merge.Patch(blocks[n], merge.Build(es[i].Entry.Spec, i, es[i].Entry.Schema))
	}
	rules := kindInheritance[es[live[0]].Policy.ID.GK.Kind]
	acc := blocks[order[len(order)-1]]
	for j := len(order) - 2; j >= 0; j-- {
		above := blocks[order[j]]
		for _, p := range rules.perBlock {
			if items, _ := merge.ToJSON(at(acc, p)).([]interface{}); len(items) > 0 {
				above = without(above, p)
			}
		}
		for _, p := range rules.onlyTrue {
			if merge.ToJSON(at(acc, p)) == false && merge.ToJSON(at(above, p)) == true {
				acc = without(acc, p)
			}
		}
		acc = merge.Patch(above, acc)
	}
	return acc
}

// at is the value at dotted path p of v, nil when absent.
func at(v *merge.Value, p string) *merge.Value {
	for _, k := range semantics.PathParts(p) {
		if v == nil || !v.IsObj {
			return nil
		}
		v = v.Obj[k]
	}
	return v
}

// without is v without the field at dotted path p (v itself when it has none); v is not modified.
func without(v *merge.Value, p string) *merge.Value {
	return withoutParts(v, semantics.PathParts(p))
}

func withoutParts(v *merge.Value, parts []string) *merge.Value {
	if v == nil || !v.IsObj {
		return v
	}
	c, ok := v.Obj[parts[0]]
	if !ok {
		return v
	}
	cp := *v
	cp.Obj = make(map[string]*merge.Value, len(v.Obj))
	for k, x := range v.Obj {
		cp.Obj[k] = x
	}
	if len(parts) == 1 {
		delete(cp.Obj, parts[0])
	} else {
		cp.Obj[parts[0]] = withoutParts(c, parts[1:])
	}
	return &cp
}
