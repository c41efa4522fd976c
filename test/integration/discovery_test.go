package integration

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

func TestTable(t *testing.T) {
	ctx := ctxFor(t)
	rc := newClient(t).EffectivepolicyV1alpha1().RESTClient()
	retry := func(sources ...string) v1alpha1.TargetPolicy {
		p := policyKind("RetryPolicy", sources...)
		p.Semantics = v1alpha1.SemanticsAssumed
		return p
	}
	epStore.Apply([]change{ep("table", "baker", nil,
		target("Gateway", "baker", retry("table/r1", "table/r2"), policyKind("ColorPolicy", "table/c1")),
		target("HTTPRoute", "baker", retry("table/r1")),
	)})
	for _, tc := range []struct {
		name       string
		get        func() ([]byte, error)
		withObject bool
	}{
		{"list", func() ([]byte, error) {
			return rc.Get().Namespace("table").Resource("effectivepolicies").
				SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
		}, false},
		{"get", func() ([]byte, error) {
			return rc.Get().Namespace("table").Resource("effectivepolicies").Name("baker").
				SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
		}, false},
		// kubectl get --sort-by asks for the whole objects in the rows.
		{"list with objects", func() ([]byte, error) {
			return rc.Get().Namespace("table").Resource("effectivepolicies").Param("includeObject", "Object").
				SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
		}, true},
		{"get with object", func() ([]byte, error) {
			return rc.Get().Namespace("table").Resource("effectivepolicies").Name("baker").Param("includeObject", "Object").
				SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := tc.get()
			if err != nil {
				t.Fatal(err)
			}
			var table metav1.Table
			if err := json.Unmarshal(raw, &table); err != nil {
				t.Fatal(err)
			}
			if table.Kind != "Table" || table.ResourceVersion == "" {
				t.Errorf("kind %q rv %q", table.Kind, table.ResourceVersion)
			}
			var cols []string
			for _, c := range table.ColumnDefinitions {
				cols = append(cols, c.Name)
			}
			if !slices.Equal(cols, []string{"Name", "Targets", "Policies", "Kinds", "Assumed", "Age"}) {
				t.Errorf("columns %v", cols)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows %v", table.Rows)
			}
			cells := fmt.Sprint(table.Rows[0].Cells[:5])
			if cells != "[baker Gateway,HTTPRoute 3 ColorPolicy,RetryPolicy RetryPolicy]" {
				t.Errorf("cells %s", cells)
			}
			if tc.withObject {
				var p v1alpha1.EffectivePolicy
				if err := json.Unmarshal(table.Rows[0].Object.Raw, &p); err != nil || p.Kind != "EffectivePolicy" || p.Name != "baker" || len(p.Targets) != 2 {
					t.Errorf("row object %s (%v)", table.Rows[0].Object.Raw, err)
				}
			}
		})
	}
}

func TestDiscovery(t *testing.T) {
	cs := newClient(t)
	list, err := cs.Discovery().ServerResourcesForGroupVersion("effectivepolicy.dev/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]metav1.APIResource{
		"effectivepolicies":        {Namespaced: true, Kind: "EffectivePolicy", SingularName: "effectivepolicy", ShortNames: []string{"effpol"}},
		"clustereffectivepolicies": {Namespaced: false, Kind: "ClusterEffectivePolicy", SingularName: "clustereffectivepolicy", ShortNames: []string{"ceffpol"}},
		"policyreaches":            {Namespaced: true, Kind: "PolicyReach", SingularName: "policyreach", ShortNames: []string{"polreach"}},
		"clusterpolicyreaches":     {Namespaced: false, Kind: "ClusterPolicyReach", SingularName: "clusterpolicyreach", ShortNames: []string{"cpolreach"}},
		"requesttraces":            {Namespaced: false, Kind: "RequestTrace", SingularName: "requesttrace", Verbs: []string{"create"}, Categories: []string{}},
		"effectivepolicyreviews":   {Namespaced: false, Kind: "EffectivePolicyReview", SingularName: "effectivepolicyreview", Verbs: []string{"create"}, Categories: []string{}},
	}
	for _, r := range list.APIResources {
		w, ok := want[r.Name]
		if !ok {
			t.Errorf("unexpected resource %s", r.Name)
			continue
		}
		delete(want, r.Name)
		verbs := append([]string(nil), r.Verbs...)
		sort.Strings(verbs)
		wantVerbs := []string{"get", "list", "watch"}
		if w.Verbs != nil {
			wantVerbs = w.Verbs
		}
		if r.Namespaced != w.Namespaced || r.Kind != w.Kind || r.SingularName != w.SingularName ||
			!slices.Equal(r.ShortNames, w.ShortNames) || !slices.Equal(verbs, wantVerbs) ||
			!slices.Equal(r.Categories, wantCategories(w)) {
			t.Errorf("%s: %+v", r.Name, r)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing %v", want)
	}
}

// wantCategories: the read resources are in the gateway-api category
// (kubectl get gateway-api); a review kind, which cannot be listed, is in
// none.
func wantCategories(w metav1.APIResource) []string {
	if w.Categories != nil {
		return nil
	}
	return []string{"gateway-api"}
}

func TestOpenAPI(t *testing.T) {
	ctx := ctxFor(t)
	rc := newClient(t).Discovery().RESTClient()

	raw, err := rc.Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var v2 struct {
		Definitions map[string]struct {
			Extensions []map[string]string `json:"x-kubernetes-group-version-kind"`
		} `json:"definitions"`
		Paths map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(raw, &v2); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"EffectivePolicy", "ClusterEffectivePolicy", "EffectivePolicyList"} {
		d, ok := v2.Definitions["dev.effectivepolicy.v1alpha1."+kind]
		if !ok || len(d.Extensions) != 1 || d.Extensions[0]["kind"] != kind || d.Extensions[0]["group"] != "effectivepolicy.dev" {
			t.Errorf("v2: %s missing or without its group-version-kind: %+v", kind, d)
		}
	}
	if _, ok := v2.Paths["/apis/effectivepolicy.dev/v1alpha1/namespaces/{namespace}/effectivepolicies/{name}"]; !ok {
		t.Error("v2: effectivepolicies path missing")
	}

	raw, err = rc.Get().AbsPath("/openapi/v3").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var index struct {
		Paths map[string]struct {
			URL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &index); err != nil {
		t.Fatal(err)
	}
	gv, ok := index.Paths["apis/effectivepolicy.dev/v1alpha1"]
	if !ok {
		t.Fatalf("v3: group version missing from %s", raw)
	}
	u, q, _ := strings.Cut(gv.URL, "?")
	req := rc.Get().AbsPath(u)
	if h, ok := strings.CutPrefix(q, "hash="); ok {
		req = req.Param("hash", h)
	}
	raw, err = req.DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var v3 struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &v3); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"EffectivePolicy", "ClusterEffectivePolicy", "Target", "PolicySource", "EffectiveSpec"} {
		if _, ok := v3.Components.Schemas["dev.effectivepolicy.v1alpha1."+kind]; !ok {
			t.Errorf("v3: %s missing", kind)
		}
	}
	if _, ok := v3.Components.Schemas["dev.effectivepolicy.v1alpha1.EffectivePolicy"].Properties["targets"]; !ok {
		t.Error("v3: EffectivePolicy has no targets property")
	}
}
