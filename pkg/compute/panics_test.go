package compute

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRecoveredPanicsCounted: a panic the last line of defense swallows is
// counted, so that tests feeding hostile input can see it.
func TestRecoveredPanicsCounted(t *testing.T) {
	before := RecoveredPanics()
	st := &state{} // no maps: applying anything panics
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]interface{}{"name": "g", "namespace": "ns"},
	}}
	if keys := st.upsert(u); keys != nil {
		t.Fatalf("keys %v after a recovered panic", keys)
	}
	if got := RecoveredPanics(); got != before+1 {
		t.Fatalf("RecoveredPanics = %d, want %d", got, before+1)
	}
}
