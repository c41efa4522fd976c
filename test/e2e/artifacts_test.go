//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// The ServiceAccount the artifacts run the server as, and the namespace they install into.
const (
	artifactsNS = "effectivepolicy-system"
	artifactsSA = "system:serviceaccount:effectivepolicy-system:effectivepolicy-apiserver"
)

// render returns the objects `kubectl kustomize dir` builds.
func render(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	return parseManifests(t, "kustomize "+dir, kubectl(t, "kustomize", dir))
}

// parseManifests splits a multi-document YAML stream into objects.
func parseManifests(t *testing.T, source, out string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(out, -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		m := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("%s: %v\n%s", source, err, doc)
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	if len(objs) == 0 {
		t.Fatalf("%s built nothing", source)
	}
	return objs
}

func objID(u *unstructured.Unstructured) string {
	id := u.GetKind() + " " + u.GetName()
	if u.GetNamespace() != "" {
		id = u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
	}
	return id
}

// rejectedGroups are the API groups of the kinds whose CRDs the local control plane lacks.
var rejectedGroups = map[string]string{"Issuer": "cert-manager.io", "Certificate": "cert-manager.io", "PrometheusRule": "monitoring.coreos.com"}

// dryRunLine matches what `kubectl apply --dry-run=server` prints per accepted object, e.g.
// "clusterrole.rbac.authorization.k8s.io/effectivepolicy-apiserver:read created (server dry run)".
var dryRunLine = regexp.MustCompile(`^(\S+)/(\S+) (created|configured|unchanged|serverside-applied) \(server dry run\)$`)

// serverDryRun runs `kubectl apply SOURCE... --dry-run=server` (source: -k dir, or -f file) and
// returns the names of the objects it accepted, stderr, and whether kubectl failed.
func serverDryRun(t *testing.T, source ...string) (accepted []string, stderr string, failed bool) {
	t.Helper()
	out, errOut, err := kubectlRaw(nil, append(append([]string{"apply"}, source...), "--dry-run=server")...)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if m := dryRunLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			accepted = append(accepted, m[2])
		} else if strings.TrimSpace(line) != "" {
			t.Errorf("unexpected kubectl output line: %q", line)
		}
	}
	return accepted, errOut, err != nil
}

// copyArtifacts copies artifacts/ to a temporary directory, so that generated overlay files
// never land in the repository.
func copyArtifacts(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "artifacts")
	if out, err := exec.Command("cp", "-r", filepath.Join(repoRoot, "artifacts"), dst).CombinedOutput(); err != nil {
		t.Fatalf("cp artifacts: %v: %s", err, out)
	}
	// Files a developer generated into the real overlay must not stand in for ours.
	for _, f := range []string{"ca.crt", "ca.key", "serving-cert-secret.yaml", "apiservice-cabundle-patch.yaml"} {
		_ = os.Remove(filepath.Join(dst, "overlays", "self-signed", f))
	}
	return dst
}

// TestArtifactsServerDryRun: the kube-apiserver accepts every object of the kustomize base and
// of the self-signed overlay in a server-side dry run (admission, schema and RBAC escalation
// checks run; nothing is stored). The cert-manager overlay is rejected exactly for its
// cert-manager.io objects, whose CRDs this control plane does not have; everything else in it
// is accepted. The objects in effectivepolicy-system need that namespace to exist (a dry run
// does not create the Namespace): hack/local-up.sh creates it.
func TestArtifactsServerDryRun(t *testing.T) {
	kubectl(t, "get", "namespace", artifactsNS)
	dir := copyArtifacts(t)

	check := func(t *testing.T, kustomization string, rejectedKinds map[string]bool) {
		checkServerDryRun(t, render(t, kustomization), []string{"-k", kustomization}, rejectedKinds)
	}

	t.Run("base", func(t *testing.T) { check(t, dir, nil) })

	t.Run("self-signed", func(t *testing.T) {
		overlay := filepath.Join(dir, "overlays", "self-signed")
		cmd := exec.Command(filepath.Join(repoRoot, "hack", "gen-serving-cert.sh"), "--out-dir", overlay)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hack/gen-serving-cert.sh --out-dir %s: %v\n%s", overlay, err, out)
		}
		objs := render(t, overlay)
		var hasSecret, hasCABundle bool
		for _, u := range objs {
			if u.GetKind() == "Secret" && u.GetName() == "effectivepolicy-apiserver-serving-cert" {
				hasSecret = true
			}
			if u.GetKind() == "APIService" {
				b, _, _ := unstructured.NestedString(u.Object, "spec", "caBundle")
				hasCABundle = b != ""
			}
		}
		if !hasSecret || !hasCABundle {
			t.Errorf("self-signed overlay: serving Secret %v, APIService caBundle %v; want both", hasSecret, hasCABundle)
		}
		check(t, overlay, nil)
	})

	// cert-manager's CRDs are not installed here (installing stand-ins would test only the
	// stand-ins): its Issuers and Certificate must be the only rejections.
	t.Run("cert-manager", func(t *testing.T) {
		overlay := filepath.Join(dir, "overlays", "cert-manager")
		kinds := map[string]bool{}
		for _, u := range render(t, overlay) {
			if strings.HasPrefix(u.GetAPIVersion(), "cert-manager.io/") {
				kinds[u.GetKind()] = true
			}
		}
		if !kinds["Certificate"] || !kinds["Issuer"] {
			t.Fatalf("cert-manager overlay kinds %v: want Certificate and Issuer", kinds)
		}
		check(t, overlay, kinds)
	})
}

// canI asks the kube-apiserver with a SubjectAccessReview, as `kubectl auth can-i --as` does
// (with a SelfSubjectAccessReview under impersonation). Not kubectl itself: for a resource the
// cluster does not serve (the policy kinds whose CRDs are not installed here), kubectl puts
// "resource.group" into the resource and leaves the group empty, so it asks a different question.
// resource is "resource.group" ("secrets", "configmaps/name" for one object, or
// "resource.group/name").
// The user is in groups only (a SubjectAccessReview adds none by itself, not even
// system:authenticated, which every real caller is in).
func canI(t *testing.T, user string, groups []string, verb, resource, namespace string) bool {
	t.Helper()
	attrs := &authorizationv1.ResourceAttributes{Verb: verb}
	if i := strings.Index(resource, "/"); i >= 0 {
		resource, attrs.Name = resource[:i], resource[i+1:]
	}
	attrs.Resource, attrs.Group, _ = strings.Cut(resource, ".")
	if namespace != "*" {
		attrs.Namespace = namespace
	}
	cs, err := kubernetes.NewForConfig(restConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: attrs},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SubjectAccessReview %s %s as %s: %v", verb, resource, user, err)
	}
	return sar.Status.Allowed
}

type access struct {
	verb, resource, namespace string // namespace "*": all namespaces, "": cluster scope
	allowed                   bool
	// readAll: the row does not hold for the real ServiceAccount, which hack/local-up.sh also
	// binds to its own read-everything ClusterRole (effectivepolicy-apiserver:read-all).
	readAll bool
	// groups the user is in for this row (none: not even system:authenticated).
	groups []string
}

func (a access) String() string {
	s := a.verb + " " + a.resource
	if a.namespace != "" {
		s += " -n " + a.namespace
	}
	return s
}

// TestArtifactsRBAC applies the artifacts' RBAC objects and checks, with SubjectAccessReviews
// (what `kubectl auth can-i` asks, see canI),
// what they let the server's ServiceAccount and a namespace viewer do.
//
// hack/local-up.sh already creates two of the same names (the auth-delegator
// ClusterRoleBinding and the kube-system RoleBinding): those are not applied (the running server
// depends on them); they are checked with a server-side dry run and compared with what is there,
// and the test fails if they differ. The other RBAC objects are applied for real and deleted
// afterwards. Because local-up also binds its read-everything ClusterRole to the real
// ServiceAccount, the full table runs against a stand-in ServiceAccount in a test namespace,
// bound by copies of the artifacts' bindings; the real ServiceAccount runs the rows read-all
// does not change.
func TestArtifactsRBAC(t *testing.T) {
	const standinNS = "ep-e2e-artifacts-rbac"
	standin := "system:serviceaccount:" + standinNS + ":effectivepolicy-apiserver"
	createNamespace(t, standinNS)

	for _, u := range artifactsRBAC(t) {
		applyOrCompareRBACObject(t, u)
		// The stand-in: a copy of each binding of the server's ServiceAccount, bound to the stand-in.
		if strings.HasSuffix(u.GetKind(), "Binding") {
			bindStandin(t, u, standinNS)
		}
	}

	server := serverAccessRows()
	t.Run("stand-in ServiceAccount", func(t *testing.T) { checkCanI(t, standin, server) })
	t.Run("artifacts ServiceAccount", func(t *testing.T) {
		var rows []access
		for _, a := range server {
			if !a.readAll {
				rows = append(rows, a)
			}
		}
		checkCanI(t, artifactsSA, rows)
	})

	// A viewer of one namespace: the built-in view ClusterRole, into which the artifacts' reader
	// ClusterRoles aggregate (clusterrole-aggregation-controller), bound in that namespace only.
	t.Run("namespace viewer", testArtifactsNamespaceViewer)
}

// artifactsRBAC returns the RBAC objects of the artifacts, which must
// include ClusterRoles, ClusterRoleBindings and a RoleBinding.
func artifactsRBAC(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	var rbac []*unstructured.Unstructured
	for _, u := range render(t, filepath.Join(repoRoot, "artifacts")) {
		if u.GetAPIVersion() == "rbac.authorization.k8s.io/v1" {
			rbac = append(rbac, u)
		}
	}
	kinds := map[string]int{}
	for _, u := range rbac {
		kinds[u.GetKind()]++
	}
	if kinds["ClusterRole"] == 0 || kinds["ClusterRoleBinding"] == 0 || kinds["RoleBinding"] == 0 {
		t.Fatalf("artifacts RBAC kinds %v: want ClusterRoles, ClusterRoleBindings and a RoleBinding", kinds)
	}

	return rbac
}

// applyRBACObject applies u with kubectl (and the extra flags).
func applyRBACObject(t *testing.T, u *unstructured.Unstructured, extra ...string) {
	t.Helper()
	data, err := yaml.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	kubectlApply(t, string(data), extra...)
}

// rbacRef is how kubectl names u: its resource, name and namespace flag.
func rbacRef(u *unstructured.Unstructured) []string {
	r := []string{strings.ToLower(u.GetKind()) + ".rbac.authorization.k8s.io", u.GetName()}
	if u.GetNamespace() != "" {
		r = append(r, "-n", u.GetNamespace())
	}
	return r
}

// applyOrCompareRBACObject applies u for real, deleted when the test ends,
// unless it exists (created by hack/local-up.sh): then a server dry run, and
// its roleRef, subjects, rules and aggregationRule compared with the live
// object's.
func applyOrCompareRBACObject(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	args := append([]string{"get"}, rbacRef(u)...)
	out, _, err := kubectlRaw(nil, append(args, "-o", "json", "--ignore-not-found")...)
	if err != nil {
		t.Fatalf("kubectl %v: %v", args, err)
	}
	if strings.TrimSpace(out) == "" { // new: apply for real, delete afterwards
		applyRBACObject(t, u)
		del := append([]string{"delete", "--ignore-not-found"}, rbacRef(u)...)
		t.Cleanup(func() { _, _, _ = kubectlRaw(nil, del...) })
	} else { // exists (hack/local-up.sh): dry run and compare
		t.Logf("%s exists (created by hack/local-up.sh): server dry run and comparison only", objID(u))
		applyRBACObject(t, u, "--dry-run=server")
		live := &unstructured.Unstructured{}
		if err := live.UnmarshalJSON([]byte(out)); err != nil {
			t.Fatal(err)
		}
		for _, field := range []string{"roleRef", "subjects", "rules", "aggregationRule"} {
			if !reflect.DeepEqual(live.Object[field], u.Object[field]) {
				t.Errorf("%s: %s differs from the live object:\n artifacts: %v\n live: %v", objID(u), field, u.Object[field], live.Object[field])
			}
		}
	}
}

// bindStandin applies a copy of binding u bound to the stand-in
// ServiceAccount of standinNS instead of the server's, deleted when the test
// ends; nothing if u does not bind the server's ServiceAccount.
func bindStandin(t *testing.T, u *unstructured.Unstructured, standinNS string) {
	t.Helper()
	c := u.DeepCopy()
	subjects, _, _ := unstructured.NestedSlice(c.Object, "subjects")
	bound := false
	for _, s := range subjects {
		s := s.(map[string]interface{})
		if s["kind"] == "ServiceAccount" && s["name"] == "effectivepolicy-apiserver" && s["namespace"] == artifactsNS {
			s["namespace"] = standinNS
			bound = true
		}
	}
	if !bound {
		return
	}
	_ = unstructured.SetNestedSlice(c.Object, subjects, "subjects")
	c.SetName(c.GetName() + ":" + standinNS)
	c.SetLabels(nil)
	applyRBACObject(t, c)
	del := append([]string{"delete", "--ignore-not-found"}, rbacRef(c)...)
	t.Cleanup(func() { _, _, _ = kubectlRaw(nil, del...) })
}

// serverAccessRows: what the server's ServiceAccount may and may not do.
func serverAccessRows() []access {
	const (
		crds     = "customresourcedefinitions.apiextensions.k8s.io"
		gwAPI    = ".gateway.networking.k8s.io"
		tokenRev = "tokenreviews.authentication.k8s.io"
		sar      = "subjectaccessreviews.authorization.k8s.io"
	)
	var server []access
	// Reads of every input.
	for _, r := range []struct{ resource, ns string }{
		{crds, ""}, {"gatewayclasses" + gwAPI, ""}, {"namespaces", ""},
		{"gateways" + gwAPI, "*"}, {"httproutes" + gwAPI, "*"}, {"grpcroutes" + gwAPI, "*"},
		{"referencegrants" + gwAPI, "*"}, {"services", "*"},
		// built-in policy kinds (docs/policy-kinds.md)
		{"backendtlspolicies" + gwAPI, "*"}, {"xbackendtrafficpolicies.gateway.networking.x-k8s.io", "*"},
		{"backendtrafficpolicies.gateway.envoyproxy.io", "*"}, {"securitypolicies.gateway.envoyproxy.io", "*"},
		{"ratelimitpolicies.kuadrant.io", "*"}, {"authpolicies.kuadrant.io", "*"}, {"tokenratelimitpolicies.kuadrant.io", "*"},
		{"clientsettingspolicies.gateway.nginx.org", "*"}, {"proxysettingspolicies.gateway.nginx.org", "*"},
		{"envoypatchpolicies.gateway.envoyproxy.io", "*"}, {"dnspolicies.kuadrant.io", "*"},
		{"authorizationpolicies.security.istio.io", "*"}, {"wasmplugins.extensions.istio.io", "*"}, {"envoyfilters.networking.istio.io", "*"},
	} {
		for _, verb := range []string{"get", "list", "watch"} {
			server = append(server, access{verb: verb, resource: r.resource, namespace: r.ns, allowed: true})
		}
		for _, verb := range []string{"create", "update", "patch", "delete"} {
			server = append(server, access{verb: verb, resource: r.resource, namespace: r.ns})
		}
	}
	server = append(server,
		access{verb: "create", resource: tokenRev, allowed: true},
		access{verb: "create", resource: sar, allowed: true},
		access{verb: "get", resource: "configmaps/extension-apiserver-authentication", namespace: "kube-system", allowed: true},
		access{verb: "get", resource: "secrets", namespace: "*", readAll: true},
		access{verb: "list", resource: "secrets", namespace: "*", readAll: true},
		access{verb: "get", resource: "secrets", namespace: artifactsNS, readAll: true},
		access{verb: "list", resource: "configmaps", namespace: "*", readAll: true},
		access{verb: "create", resource: "secrets", namespace: artifactsNS},
		access{verb: "create", resource: "effectivepolicies.effectivepolicy.dev", namespace: "default"},
	)

	return server
}

// checkCanI asks, for each row, whether user may do it.
func checkCanI(t *testing.T, user string, rows []access) {
	t.Helper()
	for _, a := range rows {
		if got := canI(t, user, a.groups, a.verb, a.resource, a.namespace); got != a.allowed {
			t.Errorf("%s %v: can-i %s = %v, want %v", user, a.groups, a, got, a.allowed)
		}
	}
}

func testArtifactsNamespaceViewer(t *testing.T) {
	const viewNS = "ep-e2e-artifacts-view"
	const viewer = "ep-e2e-artifacts-viewer"
	createNamespace(t, viewNS)
	kubectl(t, "create", "rolebinding", "viewer", "--clusterrole", "view", "--user", viewer, "-n", viewNS)
	const ep, cep = "effectivepolicies.effectivepolicy.dev", "clustereffectivepolicies.effectivepolicy.dev"
	var rows []access
	for _, verb := range []string{"get", "list", "watch"} {
		rows = append(rows,
			access{verb: verb, resource: ep, namespace: viewNS, allowed: true},
			access{verb: verb, resource: ep, namespace: "default"},
			access{verb: verb, resource: ep, namespace: "*"},
			access{verb: verb, resource: cep},
		)
	}
	for _, verb := range []string{"create", "update", "patch", "delete"} {
		rows = append(rows, access{verb: verb, resource: ep, namespace: viewNS})
	}
	// Previewing her own change (docs/review.md): reviews are cluster-scoped, which her namespaced
	// view cannot grant; the artifacts grant them to every authenticated user.
	const reviews = "effectivepolicyreviews.effectivepolicy.dev"
	authenticated := []string{"system:authenticated"}
	rows = append(rows,
		access{verb: "create", resource: reviews, groups: authenticated, allowed: true},
		access{verb: "create", resource: reviews},
		access{verb: "list", resource: reviews, groups: authenticated},
	)
	checkCanI(t, viewer, rows)
}

// checkServerDryRun: kube-apiserver accepts every one of objs in a server-side dry run of
// `kubectl apply SOURCE...`, but those of rejectedKinds (cert-manager's, whose CRDs this control
// plane lacks), which are rejected for that reason only.
func checkServerDryRun(t *testing.T, objs []*unstructured.Unstructured, source []string, rejectedKinds map[string]bool) {
	t.Helper()
	accepted, stderr, failed := serverDryRun(t, source...)
	var want, wantRejected []string
	for _, u := range objs {
		if rejectedKinds[u.GetKind()] {
			wantRejected = append(wantRejected, objID(u))
			continue
		}
		want = append(want, u.GetName())
	}
	sort.Strings(want)
	sort.Strings(accepted)
	if !reflect.DeepEqual(accepted, want) {
		t.Errorf("accepted objects:\n got %v\nwant %v\nstderr: %s", accepted, want, stderr)
	}
	if len(wantRejected) == 0 {
		if failed || strings.TrimSpace(stderr) != "" {
			t.Errorf("kubectl apply %v --dry-run=server failed:\n%s", source, stderr)
		}
		return
	}
	if !failed {
		t.Errorf("kubectl apply %v --dry-run=server succeeded; want %v rejected", source, wantRejected)
	}
	// One error per rejected object, each for a kind without a CRD here, and no other error:
	// kubectl prints `resource mapping not found for name: ... no matches for kind "Issuer" in
	// version "cert-manager.io/v1"` and `ensure CRDs are installed first` for each (after
	// "error: " when it is the only error).
	var errs []string
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		line = strings.TrimPrefix(line, "error: ")
		switch {
		case strings.TrimSpace(line) == "ensure CRDs are installed first":
		case strings.HasPrefix(line, "resource mapping not found for name:"):
			errs = append(errs, line)
		default:
			t.Errorf("unexpected kubectl error output: %s", line)
		}
	}
	if len(errs) != len(wantRejected) {
		t.Errorf("%d errors, want %d (one per %v):\n%s", len(errs), len(wantRejected), wantRejected, stderr)
	}
	for _, e := range errs {
		ok := false
		for kind := range rejectedKinds {
			if strings.Contains(e, `no matches for kind "`+kind+`" in version "`+rejectedGroups[kind]+`/`) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("unexpected rejection: %s", e)
		}
	}
}
