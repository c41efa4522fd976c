package ui

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/render"
)

// Mark is a node the page highlights for a reach or a trace, with a note
// (the outcome, the matched rule) written under its label.
type Mark struct {
	ID   string `json:"id"`
	Note string `json:"note,omitempty"`
}

// answer writes v, or err with its status: the API server's own (403 for
// what the user may not read, 404, ...), 400 for bad input.
func answer(w http.ResponseWriter, v any, err error) {
	if err == nil {
		writeJSON(w, v)
		return
	}
	var ae *apiError
	var st apierrors.APIStatus
	switch {
	case errors.As(err, &ae):
		writeError(w, ae.status, ae.msg)
	case errors.As(err, &st) && st.Status().Code >= 400:
		writeError(w, int(st.Status().Code), err.Error())
	default:
		writeError(w, http.StatusBadGateway, err.Error())
	}
}

// listBoth lists the namespaced objects of the page's namespace and the
// cluster-scoped ones; a user who may not list the cluster-scoped ones
// sees the namespaced ones only, as kubectl would show them.
func (s *Server) listBoth(ctx context.Context, list func(context.Context, string, bool) (runtime.Object, error)) ([]runtime.Object, error) {
	return listBoth(ctx, s.opts.Namespace, list)
}

// listBoth lists namespace's objects and the cluster-scoped ones when allowed.
func listBoth(ctx context.Context, namespace string, list func(context.Context, string, bool) (runtime.Object, error)) ([]runtime.Object, error) {
	ns, err := list(ctx, namespace, false)
	if err != nil {
		return nil, err
	}
	cl, err := list(ctx, "", true)
	if apierrors.IsForbidden(err) {
		return []runtime.Object{ns}, nil
	}
	if err != nil {
		return nil, err
	}
	return []runtime.Object{ns, cl}, nil
}

func (s *Server) graph(w http.ResponseWriter, r *http.Request) {
	g, err := s.graphOf(r.Context(), r.URL.Query().Get("gateway"))
	if err != nil {
		answer(w, nil, err)
		return
	}
	// The Live stream's first graph is this one unless something changed
	// since: the page sends the tag back and is spared reading it twice.
	w.Header().Set(GraphTagHeader, g.tag)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(g.body)
}

// listing says how far the server's first list is, so that the page can
// say it while it waits for its graph (at scale 1 the list takes seconds):
// {"listed":15000,"total":40403} (total -1 when the API server does not
// say), or {} when no list is under way (offline, a list of one page, or
// the list done).
func (s *Server) listing(w http.ResponseWriter, _ *http.Request) {
	out := map[string]int64{}
	if s.store != nil {
		if listed, total, ok := s.store.listing(); ok {
			out["listed"], out["total"] = listed, total
		}
	}
	writeJSON(w, out)
}

// GraphTagHeader names the graph /api/graph answers (graphTag).
const GraphTagHeader = "X-EffectivePolicy-Graph"

// objectQuery reads the namespace and name of the query; a cluster-scoped
// object has no namespace.
func objectQuery(r *http.Request) (group, kind, namespace, name string, err error) {
	q := r.URL.Query()
	group, kind, namespace, name = q.Get("group"), q.Get("kind"), q.Get("namespace"), q.Get("name")
	if kind == "" || name == "" {
		return "", "", "", "", badRequest("kind and name are required")
	}
	return group, kind, namespace, name, nil
}

func (s *Server) target(w http.ResponseWriter, r *http.Request) {
	group, kind, namespace, name, err := objectQuery(r)
	if err != nil {
		answer(w, nil, err)
		return
	}
	obj, err := s.opts.Source.EffectivePolicy(r.Context(), namespace, name)
	if err != nil {
		answer(w, nil, err)
		return
	}
	ns, targets := render.TargetsOf(obj)
	for _, t := range targets {
		if t.Group == group && t.Kind == kind {
			answer(w, map[string]any{"trees": Trees(render.Target(ns, t))}, nil)
			return
		}
	}
	answer(w, nil, notFound("no policy reaches %s %s", kind, qualified(namespace, name)))
}

// PolicyRef names one policy for the Policy view's list.
type PolicyRef struct {
	Label string            `json:"label"`
	Ref   map[string]string `json:"ref"`
}

// reaches is the Policy view's list: every policy of the PolicyReaches the
// user may list, from the server's one list and watch of them online.
func (s *Server) reaches(w http.ResponseWriter, r *http.Request) {
	objs, err := s.reachObjects(r.Context())
	if err != nil {
		answer(w, nil, err)
		return
	}
	out := []PolicyRef{}
	for _, obj := range objs {
		ns, name, policies := render.PoliciesOf(obj)
		for _, p := range policies {
			out = append(out, PolicyRef{
				Label: p.Kind + " " + qualified(ns, name),
				Ref:   map[string]string{"group": p.Group, "kind": p.Kind, "namespace": ns, "name": name},
			})
		}
	}
	answer(w, map[string]any{"policies": out}, nil)
}

// reachObjects are the PolicyReaches: the shared copy of a source that
// changes, a list of one that does not (--offline: the manifests' engine
// answers at once).
func (s *Server) reachObjects(ctx context.Context) ([]runtime.Object, error) {
	if s.reachStore != nil {
		run, err := s.reachStore.get(ctx, s.life)
		if err != nil {
			return nil, err
		}
		return run.objects(), nil
	}
	lists, err := s.listBoth(ctx, s.opts.Source.PolicyReaches)
	if err != nil {
		return nil, err
	}
	return render.Items(lists...), nil
}

func (s *Server) reach(w http.ResponseWriter, r *http.Request) {
	group, kind, namespace, name, err := objectQuery(r)
	if err != nil {
		answer(w, nil, err)
		return
	}
	obj, err := s.opts.Source.PolicyReach(r.Context(), namespace, name)
	if err != nil {
		answer(w, nil, err)
		return
	}
	ns, n, policies := render.PoliciesOf(obj)
	for _, p := range policies {
		if p.Group == group && p.Kind == kind {
			answer(w, map[string]any{"trees": Trees(render.Reach(ns, n, p)), "marks": reachMarks(p)}, nil)
			return
		}
	}
	answer(w, nil, notFound("no policy %s %s", kind, qualified(namespace, name)))
}

// reachMarks marks each target a policy reaches with its outcome (one
// per stanza that reaches it).
func reachMarks(p v1alpha1.ReachPolicy) []Mark {
	var marks []Mark
	at := map[string]int{}
	for _, rc := range p.Reaches {
		note := string(rc.Outcome)
		if rc.Stanza != "" {
			note += " (" + string(rc.Stanza) + ")"
		}
		id := refID(rc.Target)
		if i, ok := at[id]; ok {
			marks[i].Note += ", " + note
			continue
		}
		at[id] = len(marks)
		marks = append(marks, Mark{ID: id, Note: note})
	}
	return marks
}

func (s *Server) trace(w http.ResponseWriter, r *http.Request) {
	rt, err := traceOf(r, s.opts.Namespace)
	if err != nil {
		answer(w, nil, err)
		return
	}
	got, err := s.opts.Source.Trace(r.Context(), rt)
	if err != nil {
		answer(w, nil, err)
		return
	}
	answer(w, map[string]any{"trees": Trees(render.Trace(got)), "marks": traceMarks(got)}, nil)
}

// traceOf reads the Request view's form into a RequestTrace; the source
// validates the rest as the API server does.
func traceOf(r *http.Request, namespace string) (*v1alpha1.RequestTrace, error) {
	q := r.URL.Query()
	rt := &v1alpha1.RequestTrace{}
	rt.Spec.Request = v1alpha1.TracedRequest{Host: strings.TrimSpace(q.Get("host")), Path: q.Get("path"), Method: q.Get("method")}
	if p := strings.TrimSpace(q.Get("port")); p != "" {
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil || n < 1 || n > 65535 {
			return nil, badRequest("port must be a number from 1 to 65535, not %q", p)
		}
		rt.Spec.Port = int32(n)
	}
	if g := strings.TrimSpace(q.Get("gateway")); g != "" {
		ns, name, ok := strings.Cut(g, "/")
		if !ok {
			ns, name = namespace, g
		}
		if ns == "" || name == "" {
			return nil, badRequest("gateway must be NAMESPACE/NAME, not %q", g)
		}
		rt.Spec.Gateway = &v1alpha1.GatewayReference{Namespace: ns, Name: name}
	}
	for _, line := range strings.Split(q.Get("headers"), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, badRequest("header %q: want NAME=VALUE", line)
		}
		if rt.Spec.Request.Headers == nil {
			rt.Spec.Request.Headers = map[string]string{}
		}
		rt.Spec.Request.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return rt, nil
}

// traceMarks marks the path of each match: Gateway, listener, route, rule
// and backends.
func traceMarks(rt *v1alpha1.RequestTrace) []Mark {
	var marks []Mark
	for _, m := range rt.Status.Matches {
		marks = append(marks, Mark{ID: refID(m.Gateway), Note: "matched"})
		if m.Listener != "" {
			l := m.Gateway
			l.SectionName = m.Listener
			marks = append(marks, Mark{ID: refID(l), Note: "matched"})
		}
		if m.Route == nil {
			continue
		}
		marks = append(marks, Mark{ID: refID(*m.Route), Note: "matched"})
		if m.Rule != nil && m.Rule.Name != "" {
			rule := *m.Route
			rule.SectionName = m.Rule.Name
			marks = append(marks, Mark{ID: refID(rule), Note: "matched rule"})
		}
		for _, b := range m.Backends {
			marks = append(marks, Mark{ID: refID(b.Ref), Note: "backend"})
		}
	}
	return marks
}
