package registry

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

var swaggerMetadataDescriptions = metav1.ObjectMeta{}.SwaggerDoc()

var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: swaggerMetadataDescriptions["name"]},
	{Name: "Targets", Type: "string", Description: "Kinds of the objects of this name that policies reach."},
	{Name: "Policies", Type: "integer", Description: "Number of distinct policies that reach them."},
	{Name: "Kinds", Type: "string", Description: "Kinds of those policies."},
	{Name: "Assumed", Type: "string", Description: assumedDescription},
	{Name: "Age", Type: "string", Description: swaggerMetadataDescriptions["creationTimestamp"]},
}

// assumedDescription is the Assumed column's: the kinds whose answers are a guess
// (docs/spec.md §4.1, "Saying when we guess").
const assumedDescription = "Of those kinds, the ones no descriptor or profile describes: computed with the GEP fold, their semantics assumed (semantics: Assumed)."

// noneCell is what kubectl prints for an empty list.
const noneCell = "<none>"

var reachColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: swaggerMetadataDescriptions["name"]},
	{Name: "Kinds", Type: "string", Description: "Kinds of the policies of this name."},
	{Name: "Assumed", Type: "string", Description: assumedDescription},
	{Name: "Targets", Type: "integer", Description: "Targets (and stanzas) the policies reach, hidden ones included."},
	{Name: "Enforced", Type: "integer", Description: "Of those, Enforced."},
	{Name: "Partial", Type: "integer", Description: "Of those, PartiallyEnforced."},
	{Name: "Overridden", Type: "integer", Description: "Of those, Overridden."},
	{Name: "Conflicted", Type: "integer", Description: "Of those, Conflicted."},
	{Name: "Invalid", Type: "integer", Description: "Of those, Invalid."},
	{Name: "Age", Type: "string", Description: swaggerMetadataDescriptions["creationTimestamp"]},
}

// tableConvertor prints NAME, TARGETS, POLICIES, KINDS, ASSUMED, AGE for
// effective policies, and NAME, KINDS, ASSUMED, TARGETS, ENFORCED, PARTIAL,
// OVERRIDDEN, CONFLICTED, INVALID, AGE for policy reaches (docs/spec.md §2,
// §8); ASSUMED lists the kinds whose semantics were assumed, <none> when
// there are none.
type tableConvertor struct{ reach bool }

// ConvertToTable implements rest.TableConvertor. It gets what Get and List
// returned (encoded), or, in table watches, the decoded object: the API
// machinery converts a CacheableObject's GetObject there. encoded.SummaryOf
// reads either.
func (c tableConvertor) ConvertToTable(_ context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	opt, _ := tableOptions.(*metav1.TableOptions)
	if opt == nil || !opt.NoHeaders {
		table.ColumnDefinitions = columns
		if c.reach {
			table.ColumnDefinitions = reachColumns
		}
	}
	// With includeObject=Object (kubectl get --sort-by) the API machinery
	// converts each row's object to the API version with the scheme, which
	// knows the typed objects only: hand it those (decoding costs only
	// then; by default rows carry metadata only).
	withObject := opt != nil && opt.IncludeObject == metav1.IncludeObject
	row := func(obj runtime.Object) error {
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		cells, err := c.cells(obj)
		if err != nil {
			return err
		}
		if co, ok := obj.(runtime.CacheableObject); ok && withObject {
			obj = co.GetObject()
		}
		table.Rows = append(table.Rows, metav1.TableRow{
			Cells:  append(append([]interface{}{m.GetName()}, cells...), age(m.GetCreationTimestamp())),
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

// cells are a row's cells between NAME and AGE.
func (c tableConvertor) cells(obj runtime.Object) ([]interface{}, error) {
	if c.reach {
		s, err := encoded.ReachSummaryOf(obj)
		if err != nil {
			return nil, err
		}
		kinds, err := encoded.SummaryOf(obj)
		if err != nil {
			return nil, err
		}
		n := s.Counts
		return []interface{}{kinds.PolicyKinds, assumedCell(kinds), int64(n.Targets), int64(n.Enforced), int64(n.PartiallyEnforced),
			int64(n.Overridden), int64(n.Conflicted), int64(n.Invalid)}, nil
	}
	s, err := encoded.SummaryOf(obj)
	if err != nil {
		return nil, err
	}
	return []interface{}{s.TargetKinds, s.Policies, s.PolicyKinds, assumedCell(s)}, nil
}

func assumedCell(s encoded.Summary) string {
	if s.AssumedKinds == "" {
		return noneCell
	}
	return s.AssumedKinds
}

func age(ts metav1.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(ts.Time))
}
