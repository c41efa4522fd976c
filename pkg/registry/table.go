package registry

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

var swaggerMetadataDescriptions = metav1.ObjectMeta{}.SwaggerDoc()

var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: swaggerMetadataDescriptions["name"]},
	{Name: "Targets", Type: "string", Description: "Kinds of the objects of this name that policies reach."},
	{Name: "Policies", Type: "integer", Description: "Number of distinct policies that reach them."},
	{Name: "Kinds", Type: "string", Description: "Kinds of those policies."},
	{Name: "Age", Type: "string", Description: swaggerMetadataDescriptions["creationTimestamp"]},
}

// tableConvertor prints NAME, TARGETS, POLICIES, KINDS, AGE.
type tableConvertor struct{}

// ConvertToTable implements rest.TableConvertor.
func (tableConvertor) ConvertToTable(_ context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	if opt, ok := tableOptions.(*metav1.TableOptions); !ok || !opt.NoHeaders {
		table.ColumnDefinitions = columns
	}
	row := func(obj runtime.Object) error {
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		targets, err := targetsOf(obj)
		if err != nil {
			return err
		}
		kinds, policies, policyKinds := summarize(targets)
		table.Rows = append(table.Rows, metav1.TableRow{
			Cells:  []interface{}{m.GetName(), kinds, policies, policyKinds, age(m.GetCreationTimestamp())},
			Object: runtime.RawExtension{Object: obj},
		})
		return nil
	}
	if meta.IsListType(object) {
		if err := meta.EachListItem(object, row); err != nil {
			return nil, err
		}
		if l, err := meta.ListAccessor(object); err == nil {
			table.ResourceVersion = l.GetResourceVersion()
			table.Continue = l.GetContinue()
			table.RemainingItemCount = l.GetRemainingItemCount()
		}
	} else {
		if err := row(object); err != nil {
			return nil, err
		}
		if m, err := meta.Accessor(object); err == nil {
			table.ResourceVersion = m.GetResourceVersion()
		}
	}
	return table, nil
}

func targetsOf(obj runtime.Object) ([]v1alpha1.Target, error) {
	switch o := obj.(type) {
	case *v1alpha1.EffectivePolicy:
		return o.Targets, nil
	case *v1alpha1.ClusterEffectivePolicy:
		return o.Targets, nil
	}
	return nil, fmt.Errorf("unexpected object %T", obj)
}

// summarize returns the target kinds, the number of distinct source policies
// and the policy kinds (target kinds in order of appearance, policy kinds sorted).
func summarize(targets []v1alpha1.Target) (string, int64, string) {
	var kinds, policyKinds []string
	seenKind := map[string]bool{}
	seenPolicyKind := map[string]bool{}
	policies := map[string]bool{}
	for _, t := range targets {
		if !seenKind[t.Kind] {
			seenKind[t.Kind] = true
			kinds = append(kinds, t.Kind)
		}
		for _, p := range t.Policies {
			if !seenPolicyKind[p.Kind] {
				seenPolicyKind[p.Kind] = true
				policyKinds = append(policyKinds, p.Kind)
			}
			for _, s := range p.Sources {
				policies[p.Group+"/"+p.Kind+"/"+s.Namespace+"/"+s.Name] = true
			}
		}
	}
	sort.Strings(policyKinds)
	return strings.Join(kinds, ","), int64(len(policies)), strings.Join(policyKinds, ",")
}

func age(ts metav1.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(ts.Time))
}
