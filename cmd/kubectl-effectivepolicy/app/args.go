package app

import (
	"fmt"
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/kinds"
)

// objectArgs are the objects a command is asked about, as kubectl takes
// them: TYPE/NAME, TYPE NAME..., or TYPE alone for every object of the type.
type objectArgs struct {
	typ   string
	names []string // none: every object of the type
}

func parseObjectArgs(args []string) (objectArgs, error) {
	if len(args) == 0 {
		return objectArgs{}, fmt.Errorf("name a kind and an object: KIND/NAME, KIND NAME... or KIND")
	}
	if typ, name, ok := strings.Cut(args[0], "/"); ok {
		if len(args) > 1 {
			return objectArgs{}, fmt.Errorf("there is more after %s: give KIND/NAME alone, or KIND and names", args[0])
		}
		if typ == "" || name == "" || strings.Contains(name, "/") {
			return objectArgs{}, fmt.Errorf("%q is not KIND/NAME", args[0])
		}
		return objectArgs{typ: typ, names: []string{name}}, nil
	}
	for _, n := range args[1:] {
		if strings.Contains(n, "/") {
			return objectArgs{}, fmt.Errorf("%q: after KIND, give names alone", n)
		}
	}
	return objectArgs{typ: args[0], names: args[1:]}, nil
}

// kindMatch says which kinds the user means: every kind that answers to
// the name typed (ColorPolicy may be the kind of two groups), scoped as
// the first. A kind that nothing resolves is matched by its name alone,
// case-insensitively, as namespaced: a virtual target (docs/spec.md §3) has an
// EffectivePolicy although no API serves its kind.
type kindMatch struct {
	kinds      []kinds.Kind
	loose      string // the name typed, when nothing resolved it
	Namespaced bool
}

func resolveKind(r kinds.Resolver, typ string) kindMatch {
	if ks, err := r.Resolve(typ); err == nil && len(ks) > 0 {
		return kindMatch{kinds: ks, Namespaced: ks[0].Namespaced}
	}
	return kindMatch{loose: typ, Namespaced: true}
}

// is reports whether group and kind are a kind meant.
func (m kindMatch) is(group, kind string) bool {
	if m.loose != "" {
		return strings.EqualFold(kind, m.loose)
	}
	for _, k := range m.kinds {
		if group == k.Group && kind == k.Kind {
			return true
		}
	}
	return false
}

// String is the kind as the user reads it in messages.
func (m kindMatch) String() string {
	if m.loose != "" {
		return m.loose
	}
	return m.kinds[0].Kind
}
