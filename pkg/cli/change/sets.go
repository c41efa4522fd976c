package change

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/kinds"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/manifests"
)

// Set is one set of manifests, read, and what to call it in errors.
type Set struct {
	Name    string
	Objects []*unstructured.Unstructured
}

// Sets makes two complete sets of manifests, OLD and NEW, of a comparison
// with no cluster: each is shared (copied) followed by its own objects,
// namespaced objects without a namespace in ns, with the kinds of its own
// CRDs; OLD is stamped as a cluster would hold it (manifests.Complete),
// NEW as a review stamps a change to OLD (manifests.CompleteAfter: what
// OLD holds keeps its timestamp, the rest is newer than all of OLD).
func Sets(shared []*unstructured.Unstructured, old, proposed Set, ns string) (before, after []*unstructured.Unstructured, err error) {
	var sets [2][]*unstructured.Unstructured
	var tables [2]*kinds.Table
	for i, s := range []Set{old, proposed} {
		for _, u := range shared {
			sets[i] = append(sets[i], u.DeepCopy())
		}
		sets[i] = append(sets[i], s.Objects...)
		tables[i] = kinds.NewTable()
		if err := tables[i].AddCRDs(sets[i]); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	before = manifests.Complete(sets[0], manifests.Scope{Namespace: ns, Namespaced: tables[0].Namespaced})
	after = manifests.CompleteAfter(sets[1], before, manifests.Scope{Namespace: ns, Namespaced: tables[1].Namespaced})
	return before, after, nil
}
