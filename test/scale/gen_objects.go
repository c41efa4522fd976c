package scale

// The objects' shapes: policy specs per variant, and the CRDs of the generated policy kinds
// and of the Gateway API kinds the fake cluster serves.

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// policySpec builds the settings of policy p of kind k in the given variant.
func policySpec(k PolicyKind, variant string, p int, rng *rand.Rand) map[string]interface{} {
	settings := func() map[string]interface{} {
		m := map[string]interface{}{}
		switch k.Kind {
		case "RetryPolicy":
			m["attempts"] = int64(1 + rng.IntN(5))
			m["backoff"] = fmt.Sprintf("%dms", 25*(1+rng.IntN(8)))
		case "RateLimitPolicy":
			m["burst"] = int64(10 * (1 + rng.IntN(10)))
		case "HeaderPolicy":
			m["mode"] = []string{"append", "set"}[rng.IntN(2)]
		}
		var items []interface{}
		for i, n := 0, 1+rng.IntN(3); i < n; i++ {
			name := fmt.Sprintf("%s-%d", strings.TrimSuffix(k.ListMapField, "s"), rng.IntN(4))
			items = append(items, map[string]interface{}{"name": name, "value": fmt.Sprintf("p%d-%d", p, i)})
		}
		m[k.ListMapField] = dedupeByName(items)
		return m
	}
	spec := map[string]interface{}{}
	switch variant {
	case "implicit":
		for f, v := range settings() {
			spec[f] = v
		}
	case "defaults-patch":
		spec["defaults"] = settings()
		spec["strategy"] = "patch"
	case "overrides":
		spec["overrides"] = settings()
	case "overrides-patch":
		o := settings()
		o["strategy"] = "patch"
		spec["overrides"] = o
	case "both":
		spec["defaults"] = settings()
		spec["overrides"] = settings()
	case "defaults-atomic":
		spec["defaults"] = settings()
		spec["strategy"] = "atomic"
	}
	return spec
}

func dedupeByName(items []interface{}) []interface{} {
	seen := map[interface{}]bool{}
	var out []interface{}
	for _, it := range items {
		n := it.(map[string]interface{})["name"]
		if !seen[n] {
			seen[n] = true
			out = append(out, it)
		}
	}
	return out
}

func obj(apiVersion, kind, ns, name string, spec map[string]interface{}, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": apiVersion, "kind": kind}}
	u.SetName(name)
	if ns != "" {
		u.SetNamespace(ns)
	}
	if labels != nil {
		u.SetLabels(labels)
	}
	if spec != nil {
		u.Object["spec"] = spec
	}
	return u
}

func crdObj(group, kind, plural, scope string, labels map[string]string, schema map[string]interface{}) *unstructured.Unstructured {
	u := obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", plural+"."+group, map[string]interface{}{
		"group": group,
		"scope": scope,
		"names": map[string]interface{}{
			"kind": kind, "plural": plural, "listKind": kind + "List", "singular": strings.ToLower(kind),
		},
		"versions": []interface{}{map[string]interface{}{
			"name": "v1", "served": true, "storage": true,
			"schema": map[string]interface{}{"openAPIV3Schema": schema},
		}},
	}, labels)
	return u
}

func gatewayCRD(kind, plural, scope string) *unstructured.Unstructured {
	u := crdObj(GatewayGroup, kind, plural, scope, nil, map[string]interface{}{
		"type": "object", "x-kubernetes-preserve-unknown-fields": true,
	})
	// *.k8s.io groups are protected: kube-apiserver requires this annotation
	// (the upstream Gateway API CRDs carry it too).
	u.SetAnnotations(map[string]string{"api-approved.kubernetes.io": "https://github.com/kubernetes-sigs/gateway-api/pull/1538"})
	return u
}

func policyCRD(k PolicyKind) *unstructured.Unstructured {
	listMap := func() map[string]interface{} {
		return map[string]interface{}{
			"type":                       "array",
			"x-kubernetes-list-type":     "map",
			"x-kubernetes-list-map-keys": []interface{}{"name"},
			"items": map[string]interface{}{
				"type":     "object",
				"required": []interface{}{"name"},
				"properties": map[string]interface{}{
					"name":  map[string]interface{}{"type": "string"},
					"value": map[string]interface{}{"type": "string"},
				},
			},
		}
	}
	stanza := func() map[string]interface{} {
		return map[string]interface{}{
			"type":                                 "object",
			"x-kubernetes-preserve-unknown-fields": true,
			"properties":                           map[string]interface{}{k.ListMapField: listMap()},
		}
	}
	ref := map[string]interface{}{
		"type":     "object",
		"required": []interface{}{"group", "kind", "name"},
		"properties": map[string]interface{}{
			"group":       map[string]interface{}{"type": "string"},
			"kind":        map[string]interface{}{"type": "string"},
			"name":        map[string]interface{}{"type": "string"},
			"sectionName": map[string]interface{}{"type": "string"},
		},
	}
	return crdObj(PolicyGroup, k.Kind, k.Plural, "Namespaced",
		map[string]string{"gateway.networking.k8s.io/policy": "inherited"},
		map[string]interface{}{
			"type": "object",
			"properties": map[string]interface{}{
				"spec": map[string]interface{}{
					"type":                                 "object",
					"x-kubernetes-preserve-unknown-fields": true,
					"required":                             []interface{}{"targetRefs"},
					"properties": map[string]interface{}{
						"targetRefs":   map[string]interface{}{"type": "array", "minItems": int64(1), "maxItems": int64(16), "items": ref},
						"strategy":     map[string]interface{}{"type": "string", "enum": []interface{}{"atomic", "patch"}},
						k.ListMapField: listMap(),
						"defaults":     stanza(),
						"overrides":    stanza(),
					},
				},
			},
		})
}
