package compute

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/yamldocs"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

var baseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// parseDocs parses a multi-document YAML string into unstructured objects.
func parseDocs(t testing.TB, data string) []*unstructured.Unstructured {
	t.Helper()
	out, err := yamldocs.Parse([]byte(data))
	if err != nil {
		t.Fatalf("yaml: %v\n%s", err, data)
	}
	return out
}

// stamp sets creationTimestamps one second apart, in order, starting at
// baseTime + offset seconds.
func stamp(objs []*unstructured.Unstructured, offset int) []*unstructured.Unstructured {
	for i, o := range objs {
		o.SetCreationTimestamp(metav1.NewTime(baseTime.Add(time.Duration(offset+i) * time.Second)))
	}
	return objs
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func targetsOf(obj runtime.Object) []v1alpha1.Target {
	switch o := obj.(type) {
	case *v1alpha1.EffectivePolicy:
		return o.Targets
	case *v1alpha1.ClusterEffectivePolicy:
		return o.Targets
	}
	return nil
}

func findTP(obj runtime.Object, targetKind, pgroup, pkind string) *v1alpha1.TargetPolicy {
	for _, t := range targetsOf(obj) {
		if t.Kind != targetKind {
			continue
		}
		for i := range t.Policies {
			if t.Policies[i].Group == pgroup && t.Policies[i].Kind == pkind {
				return &t.Policies[i]
			}
		}
	}
	return nil
}

func dump(obj runtime.Object) string {
	b, _ := yaml.Marshal(obj)
	return string(b)
}

func viaString(refs []v1alpha1.ObjectReference) string {
	var parts []string
	for _, r := range refs {
		s := r.Kind + "/" + r.Name
		if r.SectionName != "" {
			s += "#" + r.SectionName
		}
		parts = append(parts, s)
	}
	return fmt.Sprintf("[%s]", strings.Join(parts, " "))
}

func metav1NewTime(t time.Time) metav1.Time { return metav1.NewTime(t) }

// nopTB lets parseDocs run outside a test (generators, benchmarks).
type nopTB struct{ testing.TB }

func (nopTB) Helper()                                   {}
func (nopTB) Fatalf(format string, args ...interface{}) { panic(fmt.Sprintf(format, args...)) }
