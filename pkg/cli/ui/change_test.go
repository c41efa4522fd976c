package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/kinds"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/manifests"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/review"
)

// reviewSource answers reviews over the demo's manifests as the plugin's
// offline source does (cmd/kubectl-effectivepolicy/app/source.go: the
// server's review.Answer on the offline engine, everything visible).
type reviewSource struct {
	*demoSource
	table *kinds.Table
}

func newReviewSource(t *testing.T) *reviewSource {
	t.Helper()
	objs, err := manifests.Read(manifests.Options{Filenames: []string{"../../../hack/demo"}})
	if err != nil {
		t.Fatal(err)
	}
	table := kinds.NewTable()
	if err := table.AddCRDs(objs); err != nil {
		t.Fatal(err)
	}
	return &reviewSource{demoSource: newDemoSource(t), table: table}
}

func (s *reviewSource) Review(ctx context.Context, rv *v1alpha1.EffectivePolicyReview) (*v1alpha1.EffectivePolicyReview, error) {
	return review.Answer(ctx, s.c, rv, review.Options{})
}
func (s *reviewSource) Kinds() kinds.Resolver      { return s.table }
func (s *reviewSource) Namespace() (string, error) { return "baker", nil }

// cannedReviewer answers every review with status, or err: the cluster's
// answer to a user who may read some of what changes.
type cannedReviewer struct {
	*demoSource
	status v1alpha1.EffectivePolicyReviewStatus
	err    error
}

func (s *cannedReviewer) Review(_ context.Context, rv *v1alpha1.EffectivePolicyReview) (*v1alpha1.EffectivePolicyReview, error) {
	if s.err != nil {
		return nil, s.err
	}
	rv.Status = s.status
	return rv, nil
}
func (s *cannedReviewer) Kinds() kinds.Resolver      { return kinds.NewTable() }
func (s *cannedReviewer) Namespace() (string, error) { return "baker", nil }

// post sends body to the Change endpoint as the page does, with headers
// over the page's own.
func post(t *testing.T, s *Server, body string, headers map[string]string) (int, string) {
	t.Helper()
	_, port, _ := strings.Cut(s.listener.Addr().String(), ":")
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:"+port+changePath, strings.NewReader(body))
	r.Header.Set(TokenHeader, s.token)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Origin", "http://127.0.0.1:"+port)
	for k, v := range headers {
		if v == "" {
			r.Header.Del(k)
			continue
		}
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

func changeBody(t *testing.T, apply, del string) string {
	t.Helper()
	b, err := json.Marshal(ChangeRequest{Apply: apply, Delete: del})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func demoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../../hack/demo/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestChange: the Change view's endpoint on the demo's manifests (offline,
// as ui --offline -f hack/demo answers), and bad input.
func TestChange(t *testing.T) {
	s := newTestServer(t, newReviewSource(t), "")
	route := `"id":"gateway.networking.k8s.io/HTTPRoute/baker/baker"`
	cases := []struct {
		name     string
		body     string
		headers  map[string]string
		status   int
		contains []string
		lacks    []string
	}{
		{name: "apply a shorter timeout", body: changeBody(t, demoFile(t, "proposed/baker-timeouts-5s.yaml"), ""), status: 200,
			contains: []string{"EffectivePolicy baker/baker", "10s", "5s", route + `,"note":"changes"`, `"changes":1`, `"hidden":0`}},
		{name: "delete by KIND/NAME", body: changeBody(t, "", "timeoutpolicy/baker-timeouts # Ana's\n"), status: 200,
			contains: []string{"baker/baker-timeouts", route + `,"note":"changes"`}},
		{name: "delete by KIND/NAME -n NS", body: changeBody(t, "", "timeoutpolicy/baker-timeouts -n baker\n"), status: 200,
			contains: []string{"baker/baker-timeouts", route + `,"note":"changes"`}},
		{name: "delete by KIND/NAME in another namespace", body: changeBody(t, "", "timeoutpolicy/baker-timeouts --namespace=elsewhere\n"), status: 200,
			contains: []string{"No effective policy would change."}, lacks: []string{`"note":"changes"`}},
		{name: "delete by KIND/NAME --namespace NS", body: changeBody(t, "", "timeoutpolicy/baker-timeouts --namespace baker # Ana's\n"), status: 200,
			contains: []string{"baker/baker-timeouts", route + `,"note":"changes"`}},
		{name: "delete with -n and no namespace", body: changeBody(t, "", "timeoutpolicy/baker-timeouts -n\n"), status: 400, contains: []string{"give manifests, or KIND/NAME lines"}},
		{name: "delete by manifest", body: changeBody(t, "", demoFile(t, "40-route.yaml")), status: 200,
			contains: []string{"baker/baker-timeouts", route + `,"note":"changes"`}},
		{name: "apply what is there", body: changeBody(t, demoFile(t, "20-retry-all.yaml"), ""), status: 200,
			contains: []string{"No effective policy would change.", `"marks":[]`, `"changes":0`}},
		{name: "a Deployment beside the change is skipped", body: changeBody(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n---\n"+demoFile(t, "proposed/baker-timeouts-5s.yaml"), ""), status: 200,
			contains: []string{"skipped Deployment d: no effective policy depends on them", route}},
		{name: "bad YAML", body: changeBody(t, "kind: [unclosed\n", ""), status: 400, contains: []string{"apply: "}},
		{name: "no kind", body: changeBody(t, "metadata: {name: x}\n", ""), status: 400, contains: []string{"has no apiVersion or kind"}},
		{name: "nothing", body: changeBody(t, " \n", ""), status: 400, contains: []string{"nothing to review"}},
		{name: "only a Deployment", body: changeBody(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n", ""), status: 400, contains: []string{"nothing to review: skipped Deployment"}},
		{name: "delete without a name", body: changeBody(t, "", "timeoutpolicy/\n"), status: 400, contains: []string{"give manifests, or KIND/NAME lines"}},
		{name: "delete of an unknown kind", body: changeBody(t, "", "nosuchkind/x"), status: 400, contains: []string{"delete nosuchkind/x"}},
		{name: "not the page's JSON", body: `{"apply": 3}`, status: 400, contains: []string{"not the JSON the page sends"}},
		{name: "unknown field", body: `{"patch": "x"}`, status: 400, contains: []string{"unknown field"}},
		{name: "a form, not JSON", body: "apply=x", headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, status: 415},
		{name: "too large", body: changeBody(t, "# "+strings.Repeat("x", MaxChangeBytes)+"\n", ""), status: 413, contains: []string{"more than 1048576 bytes"}},
		{name: "without the token", body: changeBody(t, demoFile(t, "40-route.yaml"), ""), headers: map[string]string{TokenHeader: ""}, status: 401},
		{name: "from another origin", body: changeBody(t, demoFile(t, "40-route.yaml"), ""), headers: map[string]string{"Origin": "http://attacker.example"}, status: 403},
		{name: "cross-site", body: changeBody(t, demoFile(t, "40-route.yaml"), ""), headers: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": ""}, status: 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := post(t, s, tc.body, tc.headers)
			if code != tc.status {
				t.Fatalf("status %d, want %d: %s", code, tc.status, body)
			}
			for _, want := range tc.contains {
				if !strings.Contains(body, want) {
					t.Errorf("answer lacks %s: %s", want, body)
				}
			}
		})
	}
}

// TestChangeMethods: POST reaches the Change endpoint only; the others stay
// read-only, and a source that cannot review says so.
func TestChangeMethods(t *testing.T) {
	s := newTestServer(t, newReviewSource(t), "")
	if code, _ := get(t, s, changePath, nil); code != http.StatusMethodNotAllowed {
		t.Errorf("GET %s: status %d, want 405", changePath, code)
	}
	_, port, _ := strings.Cut(s.listener.Addr().String(), ":")
	for _, path := range []string{"/api/graph", "/api/trace", "/api/change/x", "/"} {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:"+port+path, strings.NewReader("{}"))
		r.Header.Set(TokenHeader, s.token)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		if w.Code != http.StatusMethodNotAllowed {
			t.Errorf("POST %s: status %d, want 405", path, w.Code)
		}
	}
	plain := newTestServer(t, newDemoSource(t), "")
	if code, body := post(t, plain, changeBody(t, demoFile(t, "40-route.yaml"), ""), nil); code != http.StatusNotImplemented {
		t.Errorf("a source without reviews: status %d: %s", code, body)
	}
}

// TestChangeHidden: online, the cluster counts the changes the user may not
// read and names none; the page says how many, and marks only what it names.
func TestChangeHidden(t *testing.T) {
	visible := v1alpha1.EffectivePolicyChange{
		Resource: "effectivepolicies", Namespace: "baker", Name: "baker", Change: v1alpha1.ChangeModified,
		Before: v1alpha1.ReviewTargets{Targets: []v1alpha1.Target{{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Name: "baker", Policies: []v1alpha1.TargetPolicy{{Kind: "TimeoutPolicy"}}}}},
		After:  v1alpha1.ReviewTargets{Targets: []v1alpha1.Target{{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Name: "baker"}, {Kind: "Service", Name: "new"}}},
	}
	src := &cannedReviewer{demoSource: newDemoSource(t), status: v1alpha1.EffectivePolicyReviewStatus{Changes: []v1alpha1.EffectivePolicyChange{visible}, HiddenChanges: 2}}
	s := newTestServer(t, src, "baker")
	code, body := post(t, s, changeBody(t, demoFile(t, "proposed/retry-all-1.yaml"), ""), nil)
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	var got ChangeAnswer
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	want := []Mark{{ID: "gateway.networking.k8s.io/HTTPRoute/baker/baker", Note: "changes"}, {ID: "/Service/baker/new", Note: "newly reached"}}
	if got.Hidden != 2 || got.Changes != 1 || len(got.Marks) != 2 || got.Marks[0] != want[0] || got.Marks[1] != want[1] {
		t.Errorf("answer %+v, want 1 change, 2 hidden, marks %+v", got, want)
	}
	if !strings.Contains(body, "2 more changes") || strings.Contains(body, "frosting") {
		t.Errorf("hidden changes not counted, or named: %s", body)
	}
	src.err = apierrors.NewForbidden(v1alpha1.Resource("effectivepolicyreviews"), "", nil)
	if code, body := post(t, s, changeBody(t, demoFile(t, "proposed/retry-all-1.yaml"), ""), nil); code != 403 || !strings.Contains(body, "effectivepolicy.dev") {
		t.Errorf("forbidden: status %d: %s", code, body)
	}
}
