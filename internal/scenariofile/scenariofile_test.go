package scenariofile

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		wantErr string
		check   func(t *testing.T, e Expected)
	}{
		{name: "every part", in: `{
			"absent": [{"namespace": "a", "name": "x"}],
			"effective": [{"namespace": "a", "name": "r", "target": {"kind": "HTTPRoute"},
				"policy": {"group": "g", "kind": "K"}, "via": [{"kind": "Gateway", "name": "gw", "sectionName": "http"}],
				"sectionName": "rule1", "spec": [{"priority": 1}], "fieldSources": {"/a": "a/p"}}],
			"sources": [{"namespace": "a", "name": "r", "target": {"kind": "HTTPRoute"},
				"policy": {"group": "g", "kind": "K"}, "source": "a/p", "outcome": "Enforced"}],
			"effectiveCount": [{"namespace": "a", "name": "r", "target": {"kind": "HTTPRoute"},
				"policy": {"group": "g", "kind": "K"}, "count": 2}]}`,
			check: func(t *testing.T, e Expected) {
				if len(e.Absent) != 1 || len(e.Effective) != 1 || len(e.Sources) != 1 || len(e.EffectiveCount) != 1 {
					t.Fatalf("parts: %+v", e)
				}
				ef := e.Effective[0]
				if ef.Via[0].SectionName != "http" || ef.SectionName != "rule1" || string(ef.Spec) != `[{"priority": 1}]` || ef.FieldSources["/a"] != "a/p" {
					t.Errorf("effective: %+v", ef)
				}
				if e.Sources[0].Outcome != "Enforced" || e.EffectiveCount[0].Count != 2 || e.EffectiveCount[0].Policy.Kind != "K" {
					t.Errorf("sources, counts: %+v %+v", e.Sources, e.EffectiveCount)
				}
			}},
		{name: "a misspelled field", in: `{"effective": [{"namespace": "a", "name": "r", "fieldSource": {}}]}`, wantErr: "unknown field"},
		{name: "a misspelled part", in: `{"source": []}`, wantErr: "unknown field"},
		{name: "two values", in: `{} {}`, wantErr: "more than one"},
		{name: "not JSON", in: `absent: []`, wantErr: "invalid character"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Parse([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, e)
		})
	}
}

// TestEveryCaseParses: every committed case reads strictly.
func TestEveryCaseParses(t *testing.T) {
	files, err := filepath.Glob("../../test/*/*/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("../../test/upstream/*/*/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	if len(files) < 100 {
		t.Fatalf("found %d expected.json files, want the committed cases (over 100)", len(files))
	}
	for _, f := range files {
		if _, err := Read(f); err != nil {
			t.Error(err)
		}
	}
}
