package encoded

import (
	"bytes"
	"encoding/json"
	"sort"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// appendTargets appends the JSON of targets exactly as json.Marshal writes
// it (field order, omitempty, sorted map keys, HTML-safe escaping, compacted
// raw specs), without reflection: encoding every changed output is on the
// path from a policy edit to its watch events, and json.Marshal took more
// CPU there than computing the outputs. Anything unusual (a string needing
// escapes, a raw spec with white space or HTML characters, a spec held as an
// Object) is handed to encoding/json for that value, so the result is always
// json.Marshal's; TestAppendTargetsMatchesJSONMarshal holds it to that, and
// the randfill tests (randfill_test.go) fail when a field of the API types
// is not written here.
func appendTargets(dst []byte, targets []v1alpha1.Target) ([]byte, error) {
	var err error
	dst = append(dst, '[')
	for i := range targets {
		if i > 0 {
			dst = append(dst, ',')
		}
		t := &targets[i]
		dst = append(dst, `{"group":`...)
		dst = appendString(dst, t.Group)
		dst = append(dst, `,"kind":`...)
		dst = appendString(dst, t.Kind)
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, t.Name)
		if len(t.Policies) > 0 {
			dst = append(dst, `,"policies":[`...)
			for j := range t.Policies {
				if j > 0 {
					dst = append(dst, ',')
				}
				if dst, err = appendTargetPolicy(dst, &t.Policies[j]); err != nil {
					return dst, err
				}
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

// appendKindHead opens the object of one policy kind (in a target's
// policies, or a reach's): group, kind, class and semantics.
func appendKindHead(dst []byte, group, kind string, class v1alpha1.PolicyClass, semantics string) []byte {
	dst = append(dst, `{"group":`...)
	dst = appendString(dst, group)
	dst = append(dst, `,"kind":`...)
	dst = appendString(dst, kind)
	dst = append(dst, `,"class":`...)
	dst = appendString(dst, string(class))
	if semantics != "" {
		dst = append(dst, `,"semantics":`...)
		dst = appendString(dst, semantics)
	}
	return dst
}

func appendTargetPolicy(dst []byte, p *v1alpha1.TargetPolicy) ([]byte, error) {
	var err error
	dst = appendKindHead(dst, p.Group, p.Kind, p.Class, p.Semantics)
	if len(p.Sources) > 0 {
		dst = append(dst, `,"sources":[`...)
		for i := range p.Sources {
			if i > 0 {
				dst = append(dst, ',')
			}
			s := &p.Sources[i]
			dst = append(dst, `{"namespace":`...)
			dst = appendString(dst, s.Namespace)
			dst = append(dst, `,"name":`...)
			dst = appendString(dst, s.Name)
			dst = append(dst, `,"attachedTo":`...)
			dst = appendRef(dst, &s.AttachedTo)
			dst = append(dst, `,"stanza":`...)
			dst = appendString(dst, string(s.Stanza))
			dst = append(dst, `,"mergeStrategy":`...)
			dst = appendString(dst, string(s.MergeStrategy))
			dst = append(dst, `,"outcome":`...)
			dst = appendString(dst, string(s.Outcome))
			if s.Message != "" {
				dst = append(dst, `,"message":`...)
				dst = appendString(dst, s.Message)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if len(p.Effective) > 0 {
		dst = append(dst, `,"effective":[`...)
		for i := range p.Effective {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendEffective(dst, &p.Effective[i]); err != nil {
				return dst, err
			}
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), nil
}

func appendEffective(dst []byte, e *v1alpha1.EffectiveSpec) ([]byte, error) {
	var err error
	dst = append(dst, `{"via":`...)
	if e.Via == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range e.Via {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendRef(dst, &e.Via[i])
		}
		dst = append(dst, ']')
	}
	if e.SectionName != "" {
		dst = append(dst, `,"sectionName":`...)
		dst = appendString(dst, e.SectionName)
	}
	dst = append(dst, `,"spec":`...)
	if dst, err = appendRaw(dst, &e.Spec); err != nil {
		return dst, err
	}
	if len(e.FieldSources) > 0 {
		keys := make([]string, 0, len(e.FieldSources))
		for k := range e.FieldSources {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		dst = append(dst, `,"fieldSources":{`...)
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendString(dst, e.FieldSources[k])
		}
		dst = append(dst, '}')
	}
	return append(dst, '}'), nil
}

func appendRef(dst []byte, r *v1alpha1.ObjectReference) []byte {
	dst = append(dst, `{"group":`...)
	dst = appendString(dst, r.Group)
	dst = append(dst, `,"kind":`...)
	dst = appendString(dst, r.Kind)
	dst = append(dst, `,"name":`...)
	dst = appendString(dst, r.Name)
	if r.Namespace != "" {
		dst = append(dst, `,"namespace":`...)
		dst = appendString(dst, r.Namespace)
	}
	if r.SectionName != "" {
		dst = append(dst, `,"sectionName":`...)
		dst = appendString(dst, r.SectionName)
	}
	return append(dst, '}')
}

// appendString quotes s as json.Marshal does; plain printable ASCII (all
// names and most messages) is copied, anything else goes through it.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // cannot fail for a string
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// appendRaw writes a RawExtension as json.Marshal does: RawExtension's own
// MarshalJSON, then compacted with HTML-safe escaping. A raw spec that is
// already compact and HTML-safe (the engine writes compact JSON) is copied.
func appendRaw(dst []byte, re *runtime.RawExtension) ([]byte, error) {
	if len(re.Raw) > 0 && (re.Raw[0] == '{' || re.Raw[0] == '[') && plainRaw(re.Raw) {
		return append(dst, re.Raw...), nil
	}
	b, err := json.Marshal(re)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// plainRaw reports whether raw JSON holds no byte that compacting or
// HTML-safe escaping could change: no white space, no <, >, &, and no
// non-ASCII byte (U+2028 and U+2029 are escaped).
func plainRaw(raw []byte) bool {
	if bytes.ContainsAny(raw, " \t\r\n<>&") {
		return false
	}
	for _, c := range raw {
		if c >= 0x80 {
			return false
		}
	}
	return json.Valid(raw)
}
