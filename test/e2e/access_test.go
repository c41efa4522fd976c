//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Names of the access tests. The markers are strings that only the policies and their effective
// policies contain: no answer to a caller who may not read them may contain one.
const (
	accessNSA        = "e2e-access-a"
	accessNSB        = "e2e-access-b"
	accessTarget     = "acc-target" // a Service in both namespaces, reached by a policy in each
	accessPolicy     = "acc-secret-policy"
	accessNSPolicy   = "acc-ns-policy" // targets Namespace e2e-access-a: a ClusterEffectivePolicy
	accessColor      = "acc-color-marker"
	accessReader     = "e2e-access-reader"   // the shipped effectivepolicies reader role, in namespace A
	accessEPOnly     = "e2e-access-ep-only"  // the shipped effectivepolicies reader role, cluster-wide
	accessPlatform   = "e2e-access-platform" // both shipped reader roles, cluster-wide, through a group
	accessPlatformGr = "e2e-access-platform-group"
	apiPrefix        = "/apis/effectivepolicy.dev/v1alpha1"
)

var accessMarkers = []string{accessTarget, accessPolicy, accessNSPolicy, accessColor, "ColorPolicy", "colors.example.com"}

func epPath(namespace, name string) string {
	p := apiPrefix
	if namespace != "" {
		p += "/namespaces/" + namespace
	}
	p += "/effectivepolicies"
	if name != "" {
		p += "/" + name
	}
	return p
}

func cepPath(name string) string {
	if name == "" {
		return apiPrefix + "/clustereffectivepolicies"
	}
	return apiPrefix + "/clustereffectivepolicies/" + name
}

// setUpAccess installs a policy in each of two namespaces (on a Service of the same name) and one
// on Namespace A, and the bindings of the three test users, and waits until the server shows the
// policies and the kube-apiserver the bindings.
func setUpAccess(t *testing.T) {
	t.Helper()
	applyColorPolicyCRDs(t)
	for _, ns := range []string{accessNSA, accessNSB} {
		createNamespace(t, ns)
		kubectlApply(t, fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %[2]s, namespace: %[1]s}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: %[3]s, namespace: %[1]s}
spec:
  targetRefs: [{group: "", kind: Service, name: %[2]s}]
  color: %[4]s
`, ns, accessTarget, accessPolicy, accessColor))
	}
	kubectlApply(t, fmt.Sprintf(`apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  targetRefs: [{group: "", kind: Namespace, name: %[1]s}]
  color: %[3]s
`, accessNSA, accessNSPolicy, accessColor))

	kubectl(t, "create", "rolebinding", "reader", "--clusterrole=effectivepolicy.dev:view-effectivepolicies", "--user="+accessReader, "-n", accessNSA)
	for _, b := range []struct{ name, role, subject string }{
		{"e2e-access-ep-only", "effectivepolicy.dev:view-effectivepolicies", "--user=" + accessEPOnly},
		{"e2e-access-platform-ep", "effectivepolicy.dev:view-effectivepolicies", "--group=" + accessPlatformGr},
		{"e2e-access-platform-cep", "effectivepolicy.dev:view-clustereffectivepolicies", "--group=" + accessPlatformGr},
	} {
		_, _, _ = kubectlRaw(nil, "delete", "clusterrolebinding", b.name, "--ignore-not-found")
		kubectl(t, "create", "clusterrolebinding", b.name, "--clusterrole="+b.role, b.subject)
		name := b.name
		t.Cleanup(func() { _, _, _ = kubectlRaw(nil, "delete", "clusterrolebinding", name, "--ignore-not-found") })
	}
	for _, c := range []struct {
		user, resource, ns string
		groups             []string
	}{
		{accessReader, "effectivepolicies.effectivepolicy.dev", accessNSA, nil},
		{accessEPOnly, "effectivepolicies.effectivepolicy.dev", "--all-namespaces", nil},
		{accessPlatform, "clustereffectivepolicies.effectivepolicy.dev", "", []string{accessPlatformGr}},
	} {
		args := []string{"auth", "can-i", "list", c.resource, "--as", c.user}
		for _, g := range c.groups {
			args = append(args, "--as-group", g)
		}
		switch c.ns {
		case "":
		case "--all-namespaces":
			args = append(args, "--all-namespaces")
		default:
			args = append(args, "-n", c.ns)
		}
		eventually(t, 30*time.Second, "binding of "+c.user, func() error {
			_, _, err := kubectlRaw(nil, args...)
			return err
		})
	}

	cs := clientset(t, "").EffectivepolicyV1alpha1()
	eventually(t, 60*time.Second, "the test policies' effect", func() error {
		for _, ns := range []string{accessNSA, accessNSB} {
			if _, err := cs.EffectivePolicies(ns).Get(context.Background(), accessTarget, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		_, err := cs.ClusterEffectivePolicies().Get(context.Background(), accessNSA, metav1.GetOptions{})
		return err
	})
}

// accessAnswer is one raw answer: status code and body.
type accessAnswer struct {
	code int
	body string
}

// asUser requests path through the kube-apiserver, impersonating user (and groups) from the
// admin kubeconfig, and returns the raw answer.
func asUser(t *testing.T, user string, groups []string, path string) accessAnswer {
	t.Helper()
	rc := clientset(t, user, groups...).EffectivepolicyV1alpha1().RESTClient()
	var code int
	res := rc.Get().AbsPath(path).Do(context.Background()).StatusCode(&code)
	body, _ := res.Raw()
	return accessAnswer{code, string(body)}
}

// checkNoLeak fails when a refusal names anything of the policies, sources or targets, other than
// the name the caller asked for (which an error message may repeat).
func checkNoLeak(t *testing.T, what string, a accessAnswer, asked string) {
	t.Helper()
	body := a.body
	if asked != "" {
		body = strings.ReplaceAll(body, asked, "<name>")
	}
	for _, m := range accessMarkers {
		if strings.Contains(body, m) {
			t.Errorf("%s: the %d answer reveals %q: %s", what, a.code, m, a.body)
		}
	}
}

// checkSameRefusal: a refusal for an object that exists and for one that does not are the same
// answer apart from the name, so a caller cannot probe which names exist.
func checkSameRefusal(t *testing.T, what string, existing, missing accessAnswer, existingName, missingName string) {
	t.Helper()
	e := strings.ReplaceAll(existing.body, existingName, "<name>")
	m := strings.ReplaceAll(missing.body, missingName, "<name>")
	if existing.code != missing.code || e != m {
		t.Errorf("%s: existing and missing names are told apart:\n existing %q: %d %s\n missing  %q: %d %s",
			what, existingName, existing.code, existing.body, missingName, missing.code, missing.body)
	}
}

// TestAccessControl covers what TestRBAC (the built-in view role in one namespace: list there,
// list/get/watch elsewhere and across namespaces refused) and TestArtifactsRBAC (the roles'
// rules, by SubjectAccessReview) do not: real requests with the shipped reader roles, get and
// watch of objects that exist, cluster-wide grants, ClusterEffectivePolicy get, and that no
// refusal reveals what the caller cannot read.
func TestAccessControl(t *testing.T) {
	setUpAccess(t)
	const missingName = "acc-no-such-name"

	// Requests through the kube-apiserver, impersonated from the admin kubeconfig.
	for _, c := range accessRequestCases() {
		t.Run(c.name, func(t *testing.T) { testAccessRequest(t, c) })
	}

	// A refused get of a name that exists and of one that does not answer the same.
	for _, c := range []accessRefusalCase{
		{"reader: effectivepolicy in another namespace", accessReader, epPath(accessNSB, accessTarget), epPath(accessNSB, missingName)},
		{"reader: clustereffectivepolicy", accessReader, cepPath(accessNSA), cepPath(missingName)},
		{"ep-only: clustereffectivepolicy", accessEPOnly, cepPath(accessNSA), cepPath(missingName)},
		{"stranger: effectivepolicy", "e2e-access-stranger", epPath(accessNSA, accessTarget), epPath(accessNSA, missingName)},
	} {
		t.Run("same refusal: "+c.name, func(t *testing.T) { testAccessSameRefusal(t, c, missingName) })
	}

	// The reader watches its own namespace and sees a new effective policy arrive.
	t.Run("reader: watch in own namespace", testAccessReaderWatch)

	t.Run("anonymous and forged requests", func(t *testing.T) { testAccessUnauthenticated(t) })
	t.Run("server port: its own authorization", func(t *testing.T) { testAccessServerPort(t, missingName) })
}

// accessRequestCase: a GET of path as user (in groups) and the status it
// must get.
type accessRequestCase struct {
	name   string
	user   string
	groups []string
	path   string
	want   int
	// contains: an allowed answer must carry these (the object is really served).
	contains []string
}

func accessRequestCases() []accessRequestCase {
	return []accessRequestCase{
		// The shipped effectivepolicies reader role bound in namespace A only.
		{"reader: get in own namespace", accessReader, nil, epPath(accessNSA, accessTarget), 200, []string{accessPolicy}},
		{"reader: list in own namespace", accessReader, nil, epPath(accessNSA, ""), 200, []string{accessTarget}},
		{"reader: get in another namespace", accessReader, nil, epPath(accessNSB, accessTarget), 403, nil},
		{"reader: list in another namespace", accessReader, nil, epPath(accessNSB, ""), 403, nil},
		{"reader: watch in another namespace", accessReader, nil, epPath(accessNSB, "") + "?watch=1", 403, nil},
		{"reader: list across namespaces", accessReader, nil, epPath("", ""), 403, nil},
		{"reader: get clustereffectivepolicy", accessReader, nil, cepPath(accessNSA), 403, nil},
		{"reader: list clustereffectivepolicies", accessReader, nil, cepPath(""), 403, nil},
		// The effectivepolicies role cluster-wide: every namespace, but not the cluster-scoped
		// resource, which needs its own grant.
		{"ep-only: list across namespaces", accessEPOnly, nil, epPath("", ""), 200, []string{accessNSA, accessNSB}},
		{"ep-only: get in namespace B", accessEPOnly, nil, epPath(accessNSB, accessTarget), 200, []string{accessPolicy}},
		{"ep-only: get clustereffectivepolicy", accessEPOnly, nil, cepPath(accessNSA), 403, nil},
		{"ep-only: list clustereffectivepolicies", accessEPOnly, nil, cepPath(""), 403, nil},
		// Both roles cluster-wide through a group (docs/access.md, "Cluster-wide read").
		{"platform: list across namespaces", accessPlatform, []string{accessPlatformGr}, epPath("", ""), 200, []string{accessNSA, accessNSB}},
		{"platform: list clustereffectivepolicies", accessPlatform, []string{accessPlatformGr}, cepPath(""), 200, []string{accessNSA}},
		{"platform: get clustereffectivepolicy", accessPlatform, []string{accessPlatformGr}, cepPath(accessNSA), 200, []string{accessNSPolicy}},
		// Nobody: a user without any binding.
		{"stranger: get in namespace A", "e2e-access-stranger", nil, epPath(accessNSA, accessTarget), 403, nil},
	}
}

// testAccessRequest makes the case's request: its status, what an allowed
// answer carries, and that a refusal reveals nothing.
func testAccessRequest(t *testing.T, c accessRequestCase) {
	a := asUser(t, c.user, c.groups, c.path)
	if a.code != c.want {
		t.Fatalf("GET %s as %s: %d, want %d: %s", c.path, c.user, a.code, c.want, a.body)
	}
	for _, s := range c.contains {
		if !strings.Contains(a.body, s) {
			t.Errorf("GET %s as %s: the answer lacks %q: %s", c.path, c.user, s, a.body)
		}
	}
	if c.want == 403 {
		asked := c.path[strings.LastIndex(c.path, "/")+1:]
		checkNoLeak(t, "GET "+c.path, a, asked)
	}
}

// accessRefusalCase: the paths of an existing and of a missing object, both
// refused to user.
type accessRefusalCase struct {
	name     string
	user     string
	existing string
	missing  string
}

func testAccessSameRefusal(t *testing.T, c accessRefusalCase, missingName string) {
	e, m := asUser(t, c.user, nil, c.existing), asUser(t, c.user, nil, c.missing)
	if e.code != http.StatusForbidden {
		t.Fatalf("GET %s as %s: %d, want 403: %s", c.existing, c.user, e.code, e.body)
	}
	existingName := c.existing[strings.LastIndex(c.existing, "/")+1:]
	checkSameRefusal(t, c.name, e, m, existingName, missingName)
}

// testAccessReaderWatch: the reader's watch of her own namespace sees a new
// effective policy arrive.
func testAccessReaderWatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs := clientset(t, accessReader).EffectivepolicyV1alpha1().EffectivePolicies(accessNSA)
	list, err := cs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatalf("watch in own namespace: %v", err)
	}
	defer w.Stop()
	kubectlApply(t, fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: acc-watched, namespace: %[1]s}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: acc-watched, namespace: %[1]s}
spec:
  targetRefs: [{group: "", kind: Service, name: acc-watched}]
  color: blue
`, accessNSA))
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch ended before the new effective policy arrived")
			}
			if ev.Type == watch.Error {
				t.Fatalf("watch error: %v", ev.Object)
			}
			if m, err := metaOf(ev.Object); err == nil && ev.Type == watch.Added && m.GetName() == "acc-watched" {
				return
			}
		case <-ctx.Done():
			t.Fatal("no ADDED event for acc-watched within 90s")
		}
	}
}

// accessEndpoints reads the ports and PKI of the local control plane.
type accessEndpoints struct {
	kubeURL, serverURL string
	roots              *x509.CertPool
	pki                string
}

func localEndpoints(t *testing.T) accessEndpoints {
	t.Helper()
	pki := filepath.Join(localDir(), "pki")
	caPEM, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	return accessEndpoints{
		kubeURL:   "https://127.0.0.1:" + localPort(t, "KUBE_PORT"),
		serverURL: "https://127.0.0.1:" + localPort(t, "SERVER_PORT"),
		roots:     roots,
		pki:       pki,
	}
}

// rawGet sends a GET with the given client certificate (nil: none) and headers.
func rawGet(t *testing.T, ep accessEndpoints, cert *tls.Certificate, url string, header map[string]string) accessAnswer {
	t.Helper()
	cfg := &tls.Config{RootCAs: ep.roots, ServerName: "127.0.0.1"}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatalf("GET %s: reading the body: %v", url, err)
	}
	return accessAnswer{resp.StatusCode, string(body)}
}

// testAccessUnauthenticated: requests without credentials, with a bogus token, or with identity
// headers but without the front-proxy client certificate that makes them trusted, are refused
// (401 or 403) by the kube-apiserver and by our server's own port, and name nothing.
func testAccessUnauthenticated(t *testing.T) {
	ep := localEndpoints(t)
	forged := map[string]string{"X-Remote-User": "local-admin", "X-Remote-Group": "system:masters"}
	bogus := map[string]string{"Authorization": "Bearer not-a-real-token"}
	for _, base := range []struct{ name, url string }{{"kube-apiserver", ep.kubeURL}, {"server port", ep.serverURL}} {
		for _, c := range []struct {
			name   string
			path   string
			header map[string]string
		}{
			{"anonymous get", epPath(accessNSA, accessTarget), nil},
			{"anonymous list", epPath(accessNSA, ""), nil},
			{"anonymous list across namespaces", epPath("", ""), nil},
			{"anonymous watch", epPath("", "") + "?watch=1", nil},
			{"anonymous clustereffectivepolicy", cepPath(accessNSA), nil},
			{"forged identity headers", epPath(accessNSA, accessTarget), forged},
			{"forged identity headers, list", epPath("", ""), forged},
			{"bogus bearer token", epPath(accessNSA, ""), bogus},
		} {
			t.Run(base.name+": "+c.name, func(t *testing.T) {
				a := rawGet(t, ep, nil, base.url+c.path, c.header)
				if a.code != http.StatusUnauthorized && a.code != http.StatusForbidden {
					t.Fatalf("GET %s: %d, want 401 or 403: %s", c.path, a.code, a.body)
				}
				t.Logf("%d %s", a.code, strings.TrimSpace(a.body))
				asked := ""
				if !strings.HasSuffix(c.path, "effectivepolicies") && !strings.Contains(c.path, "?") {
					asked = c.path[strings.LastIndex(c.path, "/")+1:]
				}
				checkNoLeak(t, "GET "+c.path, a, asked)
			})
		}
	}
}

// testAccessServerPort talks to our server's port as the aggregator does (front-proxy client
// certificate, identity in X-Remote-User), so that the server's own delegated authorization
// decides, not the kube-apiserver's in front of it: the namespace reader is allowed in its
// namespace only, and refusals are the same for names that exist and names that do not.
func testAccessServerPort(t *testing.T, missingName string) {
	ep := localEndpoints(t)
	cert, err := tls.LoadX509KeyPair(filepath.Join(ep.pki, "front-proxy-client.crt"), filepath.Join(ep.pki, "front-proxy-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	as := func(user, path string) accessAnswer {
		return rawGet(t, ep, &cert, ep.serverURL+path, map[string]string{"X-Remote-User": user, "X-Remote-Group": "system:authenticated"})
	}
	// The server caches authorization decisions for a few seconds: wait for the allow.
	eventually(t, 30*time.Second, "the reader allowed in its namespace on the server port", func() error {
		if a := as(accessReader, epPath(accessNSA, accessTarget)); a.code != http.StatusOK || !strings.Contains(a.body, accessPolicy) {
			return fmt.Errorf("%d %s", a.code, a.body)
		}
		return nil
	})
	for _, c := range []struct {
		name string
		user string
		path string
		want int
	}{
		{"reader: list in own namespace", accessReader, epPath(accessNSA, ""), 200},
		{"reader: get in another namespace", accessReader, epPath(accessNSB, accessTarget), 403},
		{"reader: list in another namespace", accessReader, epPath(accessNSB, ""), 403},
		{"reader: list across namespaces", accessReader, epPath("", ""), 403},
		{"reader: get clustereffectivepolicy", accessReader, cepPath(accessNSA), 403},
		{"platform: get clustereffectivepolicy", accessPlatform, cepPath(accessNSA), 403}, // without its group header: no grant
	} {
		t.Run(c.name, func(t *testing.T) {
			a := as(c.user, c.path)
			if a.code != c.want {
				t.Fatalf("GET %s as %s on the server port: %d, want %d: %s", c.path, c.user, a.code, c.want, a.body)
			}
			if c.want == 403 {
				asked := ""
				if !strings.HasSuffix(c.path, "effectivepolicies") {
					asked = c.path[strings.LastIndex(c.path, "/")+1:]
				}
				checkNoLeak(t, "GET "+c.path+" on the server port", a, asked)
			}
		})
	}
	t.Run("same refusal for existing and missing names", func(t *testing.T) {
		for _, p := range [][2]string{
			{epPath(accessNSB, accessTarget), epPath(accessNSB, missingName)},
			{cepPath(accessNSA), cepPath(missingName)},
		} {
			e, m := as(accessReader, p[0]), as(accessReader, p[1])
			if e.code != http.StatusForbidden {
				t.Fatalf("GET %s on the server port: %d, want 403: %s", p[0], e.code, e.body)
			}
			checkSameRefusal(t, "server port "+p[0], e, m, p[0][strings.LastIndex(p[0], "/")+1:], missingName)
		}
	})
}
