package live

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// interner makes the outputs decoded from the cache share what is equal by
// content, as the engine's outputs do: a policy's effective spec and field
// sources are the same for every target below the attachment point, and the
// same few strings (kinds, groups, policy and route names, JSON pointers)
// recur in every output. Without it, a server restored from its cache would
// hold one copy per output, several times the heap of a computed one.
type interner struct {
	strs map[string]string
	raws map[string][]byte
	maps map[string]map[string]string
	key  strings.Builder
}

func newInterner() *interner {
	return &interner{strs: map[string]string{}, raws: map[string][]byte{}, maps: map[string]map[string]string{}}
}

func (in *interner) str(s string) string {
	if s == "" {
		return ""
	}
	if v, ok := in.strs[s]; ok {
		return v
	}
	in.strs[s] = s
	return s
}

func (in *interner) raw(b []byte) []byte {
	if b == nil {
		return nil
	}
	if v, ok := in.raws[string(b)]; ok { // no allocation for the lookup
		return v
	}
	in.raws[string(b)] = b
	return b
}

// fieldSources returns the shared map equal to m. The maps are read-only
// (the REST layer copies an object before redacting it).
func (in *interner) fieldSources(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	in.key.Reset()
	for _, k := range keys {
		in.key.WriteString(k)
		in.key.WriteByte(0)
		in.key.WriteString(m[k])
		in.key.WriteByte(0)
	}
	if v, ok := in.maps[in.key.String()]; ok {
		return v
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[in.str(k)] = in.str(v)
	}
	in.maps[in.key.String()] = out
	return out
}

func (in *interner) ref(r *v1alpha1.ObjectReference) {
	r.Group, r.Kind, r.Name = in.str(r.Group), in.str(r.Kind), in.str(r.Name)
	r.Namespace, r.SectionName = in.str(r.Namespace), in.str(r.SectionName)
}

// output interns the content of a decoded EffectivePolicy or
// ClusterEffectivePolicy in place.
func (in *interner) output(obj runtime.Object) {
	var targets []v1alpha1.Target
	switch o := obj.(type) {
	case *v1alpha1.EffectivePolicy:
		targets = o.Targets
		o.Namespace = in.str(o.Namespace)
	case *v1alpha1.ClusterEffectivePolicy:
		targets = o.Targets
	default:
		return
	}
	for ti := range targets {
		t := &targets[ti]
		t.Group, t.Kind, t.Name = in.str(t.Group), in.str(t.Kind), in.str(t.Name)
		for pi := range t.Policies {
			tp := &t.Policies[pi]
			tp.Group, tp.Kind = in.str(tp.Group), in.str(tp.Kind)
			for si := range tp.Sources {
				s := &tp.Sources[si]
				s.Namespace, s.Name, s.Message = in.str(s.Namespace), in.str(s.Name), in.str(s.Message)
				in.ref(&s.AttachedTo)
			}
			for ei := range tp.Effective {
				e := &tp.Effective[ei]
				e.SectionName = in.str(e.SectionName)
				for vi := range e.Via {
					in.ref(&e.Via[vi])
				}
				e.Spec.Raw = in.raw(e.Spec.Raw)
				e.FieldSources = in.fieldSources(e.FieldSources)
			}
		}
	}
}
