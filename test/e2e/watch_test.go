//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// `kubectl get effectivepolicies -A -w` receives events as policies come and go, and so does a
// watch with the generated clientset.
func TestWatch(t *testing.T) {
	const ns = "e2e-watch"
	applyColorPolicyCRDs(t)
	createNamespace(t, ns)
	kubectlApply(t, `apiVersion: v1
kind: Service
metadata: {name: web, namespace: `+ns+`}
spec: {ports: [{name: http, port: 80}]}
`)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// kubectl -w, one JSON watch event per object.
	cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig, "get", "effectivepolicies", "-A", "-w",
		"--output-watch-events", "-o", "json")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	events := decodeKubectlWatchEvents(stdout)

	// The generated clientset's watch, too.
	w, err := clientset(t, "").EffectivepolicyV1alpha1().EffectivePolicies(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("clientset watch: %v", err)
	}
	defer w.Stop()

	time.Sleep(2 * time.Second) // let both watches establish
	kubectlApply(t, `apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: watch-me, namespace: `+ns+`}
spec:
  targetRefs: [{group: "", kind: Service, name: web}]
  color: purple
`)

	waitKubectlEvent(t, events, ns, "the policy's effect", "ADDED")

	awaitClientsetEventForWeb(t, w)

	kubectl(t, "delete", "colorpolicies.colors.example.com", "watch-me", "-n", ns)
	waitKubectlEvent(t, events, ns, "the policy's removal", "DELETED")
}

// kubectlWatchEvent is an event as kubectl -w --output-watch-events -o json
// prints it.
type kubectlWatchEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	} `json:"object"`
}

// decodeKubectlWatchEvents sends the events read from stdout, closing the
// channel when they end.
func decodeKubectlWatchEvents(stdout io.Reader) <-chan kubectlWatchEvent {
	events := make(chan kubectlWatchEvent, 100)
	go func() {
		dec := json.NewDecoder(bufio.NewReader(stdout))
		for {
			var e kubectlWatchEvent
			if err := dec.Decode(&e); err != nil {
				close(events)
				return
			}
			events <- e
		}
	}()
	return events
}

// waitKubectlEvent waits up to 60s for an event of type typ for the
// EffectivePolicy ns/web (what says what it shows).
func waitKubectlEvent(t *testing.T, events <-chan kubectlWatchEvent, ns, what, typ string) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("kubectl -w ended before %s", what)
			}
			if e.Type == typ && e.Object.Metadata.Namespace == ns && e.Object.Metadata.Name == "web" {
				return
			}
		case <-timeout:
			t.Fatalf("kubectl -w: no %s event for %s/web within 60s", typ, ns)
		}
	}
}

// awaitClientsetEventForWeb waits up to 30s for w to add or modify the
// EffectivePolicy web.
func awaitClientsetEventForWeb(t *testing.T, w watch.Interface) {
	t.Helper()
	clientsetSaw := false
	timeout := time.After(30 * time.Second)
	for !clientsetSaw {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("clientset watch closed")
			}
			if e.Type == watch.Added || e.Type == watch.Modified {
				if m, err := metaOf(e.Object); err == nil && m.GetName() == "web" {
					clientsetSaw = true
				}
			}
		case <-timeout:
			t.Fatal("clientset watch: no event for web within 30s")
		}
	}

}

func metaOf(obj any) (metav1.Object, error) {
	return meta.Accessor(obj)
}
