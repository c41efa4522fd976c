package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/change"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/kinds"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/manifests"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/render"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"
)

// MaxChangeBytes bounds the body of a Change request: the manifests to
// apply and to delete as text. It is the API server's own bound on a
// request body (a review's JSON is no smaller than its YAML), so a change
// the page takes is one the server can be sent.
const MaxChangeBytes = 1 << 20

// changePath is the Change view's endpoint, the only one a POST reaches:
// its input (manifests) is too large for a URL. The review it creates is
// answered and never stored, so the server stays read-only towards the
// cluster.
const changePath = "/api/change"

// Reviewer is a Source that answers EffectivePolicyReviews (the plugin's
// online and offline sources both do): the cluster's API with the user's
// credentials, or the manifests of --offline with everything visible.
type Reviewer interface {
	// Review answers an EffectivePolicyReview.
	Review(ctx context.Context, rv *v1alpha1.EffectivePolicyReview) (*v1alpha1.EffectivePolicyReview, error)
	// Kinds resolves kinds as the user types them (KIND/NAME to delete).
	Kinds() kinds.Resolver
	// Namespace is the namespace of -n, or the kubeconfig's.
	Namespace() (string, error)
}

// ChangeRequest is the Change view's form: manifests to apply and to
// delete. Delete also takes KIND/NAME lines, as diff's --delete.
type ChangeRequest struct {
	Apply  string `json:"apply"`
	Delete string `json:"delete"`
	// Gateway is the Gateway the page draws (its node id), when it draws
	// one at a time: the targets the change reaches for the first time are
	// drawn through it only.
	Gateway string `json:"gateway,omitempty"`
}

// ChangeAnswer is what the review changes: the diff trees (per target, the
// fields before -> after), the changed targets marked on the graph, the
// targets reached for the first time drawn as they would be (After), the
// changes the user may not see (counted, never named) and what was skipped.
type ChangeAnswer struct {
	Trees    []*TreeNode `json:"trees"`
	Marks    []Mark      `json:"marks"`
	After    AfterGraph  `json:"after"`
	Changes  int         `json:"changes"`
	Hidden   int32       `json:"hidden"`
	Warnings []string    `json:"warnings"`
}

func (s *Server) change(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "the change is sent with POST")
		return
	}
	rev, ok := s.opts.Source.(Reviewer)
	if !ok {
		writeError(w, http.StatusNotImplemented, "this source cannot review a change")
		return
	}
	req, err := readChange(w, r)
	if err != nil {
		answer(w, nil, err)
		return
	}
	focus, err := focusRef(req.Gateway)
	if err != nil {
		answer(w, nil, err)
		return
	}
	rv, warnings, err := s.reviewOf(rev, req)
	if err != nil {
		answer(w, nil, err)
		return
	}
	got, err := rev.Review(r.Context(), rv)
	if apierrors.IsForbidden(err) {
		err = fmt.Errorf("%w (creating a review needs create on effectivepolicyreviews, which the install grants every authenticated user)", err)
		answer(w, nil, &apiError{status: http.StatusForbidden, msg: err.Error()})
		return
	}
	if err != nil {
		answer(w, nil, err)
		return
	}
	answer(w, changeAnswer(got.Status, warnings, focus), nil)
}

// readChange reads the form, bounded, as JSON only: a page of another site
// cannot send JSON here without a preflight this server never grants (and
// without the token).
func readChange(w http.ResponseWriter, r *http.Request) (ChangeRequest, error) {
	var req ChangeRequest
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return req, &apiError{status: http.StatusUnsupportedMediaType, msg: "the change is sent as application/json"}
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxChangeBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return req, &apiError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("the change is more than %d bytes: review a smaller one, or offline with kubectl effectivepolicy diff --offline", MaxChangeBytes)}
		}
		return req, badRequest("the change is not the JSON the page sends: %v", err)
	}
	return req, nil
}

// reviewOf reads the manifests as diff reads -f and --delete
// (pkg/cli/change): namespaced objects without a namespace in the page's
// namespace (or the kubeconfig's, with -A); objects naming another are
// kept (the page's namespace is a view, not kubectl apply's -n).
func (s *Server) reviewOf(rev Reviewer, req ChangeRequest) (*v1alpha1.EffectivePolicyReview, []string, error) {
	ns := s.opts.Namespace
	if ns == "" {
		var err error
		if ns, err = rev.Namespace(); err != nil {
			return nil, nil, err
		}
	}
	rv := &v1alpha1.EffectivePolicyReview{}
	var warnings []string
	if strings.TrimSpace(req.Apply) != "" {
		objs, err := manifests.Parse("apply", []byte(req.Apply))
		if err != nil {
			return nil, nil, badRequest("%v", err)
		}
		var skipped change.Skipped
		if rv.Spec.Apply, skipped, err = change.Apply(objs, change.ApplyOptions{Cluster: rev.Kinds(), Namespace: ns}); err != nil {
			return nil, nil, badRequest("apply: %v", err)
		}
		warnings = skipped.Warnings()
	}
	var err error
	if rv.Spec.Delete, err = deletesOf(req.Delete, rev.Kinds(), ns); err != nil {
		return nil, nil, err
	}
	if len(rv.Spec.Apply) == 0 && len(rv.Spec.Delete) == 0 {
		msg := "nothing to review: give manifests to apply or to delete"
		if len(warnings) > 0 {
			msg = "nothing to review: " + strings.Join(warnings, "; ")
		}
		return nil, nil, badRequest("%s", msg)
	}
	return rv, warnings, nil
}

// refLines are KIND/NAME lines (kubectl's form), each with kubectl's -n NS,
// --namespace NS or --namespace=NS after it or not, which YAML would read as
// one string.
var refLines = regexp.MustCompile(`^(\s*(` + refLine + `)?\s*(#.*)?\n?)*$`)

// refLine is one KIND/NAME with its namespace flag; the groups are the
// reference and the namespace.
const refLine = `([^\s:/#=-][^\s:/#=]*/[^\s:/#=]+)(?:\s+(?:-n\s+|--namespace(?:\s+|=))([a-z0-9][-a-z0-9.]*))?`

var refLineRe = regexp.MustCompile(`^` + refLine + `$`)

// deletesOf reads the objects to delete: manifests (kubectl delete -f), or
// KIND/NAME lines, in namespace ns unless a line names its own.
func deletesOf(text string, r kinds.Resolver, ns string) ([]v1alpha1.ReviewObjectReference, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	if refLines.MatchString(text) {
		var refs []v1alpha1.ReviewObjectReference
		for _, line := range strings.Split(text, "\n") {
			line, _, _ = strings.Cut(line, "#")
			m := refLineRe.FindStringSubmatch(strings.TrimSpace(line))
			if m == nil {
				continue
			}
			lineNS := ns
			if m[2] != "" {
				lineNS = m[2]
			}
			ref, err := change.Ref(r, lineNS, "delete", m[1])
			if err != nil {
				return nil, badRequest("%v", err)
			}
			refs = append(refs, ref)
		}
		return refs, nil
	}
	objs, err := manifests.Parse("delete", []byte(text))
	if err != nil {
		return nil, badRequest("%v (give manifests, or KIND/NAME lines)", err)
	}
	refs, err := change.RefsOf(objs, r, ns)
	if err != nil {
		return nil, badRequest("delete: %v", err)
	}
	return refs, nil
}

// changeAnswer draws the review: diff's trees, and each target whose
// effective policies change marked on the graph.
func changeAnswer(st v1alpha1.EffectivePolicyReviewStatus, warnings []string, focus v1alpha1.ObjectReference) ChangeAnswer {
	roots := render.Review(st)
	if len(roots) == 0 {
		roots = []*tree.Node{tree.New(tree.S(tree.Muted, "No effective policy would change."))}
	}
	out := ChangeAnswer{Trees: Trees(roots...), Marks: []Mark{}, After: afterGraph(st.Changes, focus), Changes: len(st.Changes), Hidden: st.HiddenChanges, Warnings: warnings}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	for _, c := range st.Changes {
		out.Marks = append(out.Marks, changeMarks(c)...)
	}
	return out
}

// changeMarks marks the targets of one changed EffectivePolicy whose
// policies differ before and after.
func changeMarks(c v1alpha1.EffectivePolicyChange) []Mark {
	type state struct{ before, after *v1alpha1.Target }
	var order []string
	at := map[string]*state{}
	add := func(ts []v1alpha1.Target, after bool) {
		for i := range ts {
			t := &ts[i]
			id := nodeID(t.Group, t.Kind, c.Namespace, t.Name, "")
			if at[id] == nil {
				at[id] = &state{}
				order = append(order, id)
			}
			if after {
				at[id].after = t
			} else {
				at[id].before = t
			}
		}
	}
	add(c.Before.Targets, false)
	add(c.After.Targets, true)
	var marks []Mark
	for _, id := range order {
		st := at[id]
		switch {
		case st.before == nil:
			marks = append(marks, Mark{ID: id, Note: "newly reached"})
		case st.after == nil:
			marks = append(marks, Mark{ID: id, Note: "no longer reached"})
		case !reflect.DeepEqual(st.before.Policies, st.after.Policies):
			marks = append(marks, Mark{ID: id, Note: "changes"})
		}
	}
	return marks
}
