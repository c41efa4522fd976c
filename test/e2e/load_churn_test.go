//go:build e2e && long

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// The load test's writer: ColorPolicies created, changed and deleted in a fixed set of slots.

// loadChurn owns the ColorPolicies of the test: a fixed set of slots (namespace × level × 2), each
// empty or holding one policy. It is used by one goroutine only.
type loadChurn struct {
	dyn                       dynamic.Interface
	slots                     []loadSlot
	live                      map[int]bool
	rng                       *rand.Rand
	creates, updates, deletes int
}

type loadSlot struct {
	namespace, name string
	target          map[string]any
}

func newLoadChurn(dyn dynamic.Interface, namespaces []string, rng *rand.Rand) *loadChurn {
	c := &loadChurn{dyn: dyn, live: map[int]bool{}, rng: rng}
	ref := func(group, kind, name string) map[string]any {
		return map[string]any{"group": group, "kind": kind, "name": name}
	}
	for _, ns := range namespaces {
		levels := []struct {
			name   string
			target map[string]any
		}{
			{"class", ref("gateway.networking.k8s.io", "GatewayClass", "e2e-load-gc")},
			{"ns", ref("", "Namespace", ns)},
			{"gw", ref("gateway.networking.k8s.io", "Gateway", "gw")},
			{"r0", ref("gateway.networking.k8s.io", "HTTPRoute", "r0")},
			{"r2", ref("gateway.networking.k8s.io", "HTTPRoute", "r2")},
			{"b1", ref("", "Service", "b1")},
		}
		for _, l := range levels {
			for i := 0; i < 2; i++ {
				c.slots = append(c.slots, loadSlot{namespace: ns, name: fmt.Sprintf("load-%s-%d", l.name, i), target: l.target})
			}
		}
	}
	return c
}

func (c *loadChurn) writes() int { return c.creates + c.updates + c.deletes }

// spec is a random ColorPolicy spec: a color as a default, or under overrides.
func (c *loadChurn) spec(s loadSlot) map[string]any {
	colors := []string{"red", "green", "blue", "yellow", "purple", "orange"}
	spec := map[string]any{"targetRefs": []any{s.target}}
	color := colors[c.rng.Intn(len(colors))]
	if c.rng.Intn(4) == 0 {
		spec["overrides"] = map[string]any{"color": color}
	} else {
		spec["color"] = color
		spec["weight"] = int64(c.rng.Intn(100))
	}
	return spec
}

func (c *loadChurn) step(ctx context.Context) error {
	i := c.rng.Intn(len(c.slots))
	s := c.slots[i]
	res := c.dyn.Resource(colorGVR).Namespace(s.namespace)
	switch {
	case !c.live[i]:
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "colors.example.com/v1", "kind": "ColorPolicy",
			"metadata": map[string]any{"name": s.name, "namespace": s.namespace},
			"spec":     c.spec(s),
		}}
		if _, err := res.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s/%s: %w", s.namespace, s.name, err)
		}
		c.live[i] = true
		c.creates++
	case c.rng.Intn(2) == 0:
		// A JSON merge patch would merge the old and new stanzas; a JSON patch replaces spec whole.
		jp, _ := json.Marshal([]any{map[string]any{"op": "replace", "path": "/spec", "value": c.spec(s)}})
		if _, err := res.Patch(ctx, s.name, types.JSONPatchType, jp, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("update %s/%s: %w", s.namespace, s.name, err)
		}
		c.updates++
	default:
		if err := res.Delete(ctx, s.name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete %s/%s: %w", s.namespace, s.name, err)
		}
		delete(c.live, i)
		c.deletes++
	}
	return nil
}
