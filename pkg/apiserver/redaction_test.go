package apiserver_test

// An in-process server with a fake authenticator (header X-Test-User) and a
// fake authorizer in place of the delegated ones: sensitive fields are
// redacted on get, list and watch through the real handler chain and the
// generated clientset (docs/reliability.md).

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/cmd/effectivepolicy-apiserver/app"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	clientset "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/versioned"
)

type sensitiveAuth struct{}

func (sensitiveAuth) SensitiveKind(gk schema.GroupKind) (access.SensitiveKind, bool) {
	if gk != (schema.GroupKind{Group: "auth.example.com", Kind: "AuthPolicy"}) {
		return access.SensitiveKind{}, false
	}
	return access.SensitiveKind{
		Resource: schema.GroupResource{Group: "auth.example.com", Resource: "authpolicies"},
		Paths:    []string{"/oidc/clientSecret"},
	}, true
}

// authz: everyone may read effectivepolicies and non-resource paths; only
// alice may get authpolicies, and only in namespace "secure".
var authz = authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	switch {
	case !a.IsResourceRequest():
		return authorizer.DecisionAllow, "", nil
	case a.GetAPIGroup() == v1alpha1.SchemeGroupVersion.Group:
		return authorizer.DecisionAllow, "", nil
	case a.GetResource() == "authpolicies" && a.GetVerb() == "get" && a.GetNamespace() == "secure" && a.GetUser().GetName() == "alice":
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
})

var authn = authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
	name := req.Header.Get("X-Test-User")
	if name == "" {
		return nil, false, nil
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: name, Groups: []string{user.AllAuthenticated}}}, true, nil
})

func startRedactingServer(t *testing.T) (*versioned.Store[*encoded.Object], *rest.Config) {
	t.Helper()
	certDir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := app.NewOptions()
	ro := o.RecommendedOptions
	ro.Authentication = nil
	ro.Authorization = nil
	ro.CoreAPI = nil
	ro.SecureServing.Listener = ln
	ro.SecureServing.BindAddress = net.ParseIP("127.0.0.1")
	ro.SecureServing.BindPort = ln.Addr().(*net.TCPAddr).Port
	ro.SecureServing.ServerCert.CertDirectory = certDir
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	c, err := o.GenericConfig()
	if err != nil {
		t.Fatal(err)
	}
	// The fakes stand in for the delegated TokenReview / SubjectAccessReview.
	c.GenericConfig.Authentication.Authenticator = authn
	c.GenericConfig.Authorization.Authorizer = authz
	store := versioned.New[*encoded.Object](versioned.Options{Namespaced: true, Resource: v1alpha1.Resource("effectivepolicies")})
	c.EffectivePolicies = store
	c.ClusterEffectivePolicies = versioned.New[*encoded.Object](versioned.Options{Resource: v1alpha1.Resource("clustereffectivepolicies")})
	c.SensitiveFields = sensitiveAuth{}
	cfg := rest.CopyConfig(c.GenericConfig.LoopbackClientConfig)
	cfg.BearerToken = ""

	s, err := c.Complete().New()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := s.GenericAPIServer.PrepareRun().RunWithContext(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "server:", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-stopped:
		case <-time.After(30 * time.Second):
			t.Error("server did not stop")
		}
	})
	anon := asUser(cfg, "probe")
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		cs, err := clientset.NewForConfig(anon)
		if err != nil {
			return false, err
		}
		status := 0
		cs.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&status)
		return status == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("server not ready: %v", err)
	}
	return store, cfg
}

type headerRT struct {
	name string
	rt   http.RoundTripper
}

func (h headerRT) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("X-Test-User", h.name)
	return h.rt.RoundTrip(req)
}

func asUser(cfg *rest.Config, name string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return headerRT{name, rt} })
	return c
}

// stored is an output as the live layer stores it.
func stored(t *testing.T, o *v1alpha1.EffectivePolicy) *encoded.Object {
	t.Helper()
	e, err := encoded.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func policyObject(name, secretNS string) *v1alpha1.EffectivePolicy {
	return &v1alpha1.EffectivePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: name},
		Targets: []v1alpha1.Target{{
			Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Name: name,
			Policies: []v1alpha1.TargetPolicy{{
				Group: "auth.example.com", Kind: "AuthPolicy", Class: v1alpha1.ClassInherited,
				Effective: []v1alpha1.EffectiveSpec{{
					Spec:         runtime.RawExtension{Raw: []byte(`{"oidc":{"clientID":"id","clientSecret":"s3cr3t"}}`)},
					FieldSources: map[string]string{"/oidc/clientID": secretNS + "/p", "/oidc/clientSecret": secretNS + "/p"},
				}},
			}},
		}},
	}
}

func secretOf(t *testing.T, p *v1alpha1.EffectivePolicy) string {
	t.Helper()
	raw := p.Targets[0].Policies[0].Effective[0].Spec.Raw
	var spec struct {
		OIDC map[string]string `json:"oidc"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		return fmt.Sprintf("undecodable spec %s: %v", raw, err)
	}
	switch {
	case spec.OIDC["clientID"] != "id":
		return "unexpected spec " + string(raw)
	case spec.OIDC["clientSecret"] == "s3cr3t":
		return "visible"
	case spec.OIDC["clientSecret"] == access.Redacted:
		if p.Targets[0].Policies[0].Effective[0].FieldSources["/oidc/clientSecret"] == "" {
			return "fieldSources lost"
		}
		return "redacted"
	}
	return "unexpected spec " + string(raw)
}

func TestServerRedactsSensitiveFields(t *testing.T) {
	store, cfg := startRedactingServer(t)
	store.Apply([]versioned.Change[*encoded.Object]{
		{Namespace: "app", Name: "from-secure", Object: stored(t, policyObject("from-secure", "secure"))},
		{Namespace: "app", Name: "from-other", Object: stored(t, policyObject("from-other", "other"))},
	})
	ctx := context.Background()
	checkGetAndListPerUser(ctx, t, cfg)
	checkMixedList(ctx, t, cfg)
	checkWatchesPerUser(ctx, t, cfg, store)
}

// checkGetAndListPerUser reads each output by get and by list as each user.
func checkGetAndListPerUser(ctx context.Context, t *testing.T, cfg *rest.Config) {
	t.Helper()
	for _, tc := range []struct {
		user, name, want string
	}{
		{"alice", "from-secure", "visible"}, // allowed to get authpolicies in "secure"
		{"alice", "from-other", "redacted"}, // ... but not in "other"
		{"bob", "from-secure", "redacted"},  // not allowed anywhere
		{"bob", "from-other", "redacted"},
	} {
		cs, err := clientset.NewForConfig(asUser(cfg, tc.user))
		if err != nil {
			t.Fatal(err)
		}
		eps := cs.EffectivepolicyV1alpha1().EffectivePolicies("app")
		got, err := eps.Get(ctx, tc.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s := secretOf(t, got); s != tc.want {
			t.Errorf("%s get %s: %s, want %s", tc.user, tc.name, s, tc.want)
		}
		list, err := eps.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + tc.name})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 {
			t.Fatalf("list: %d items", len(list.Items))
		}
		if s := secretOf(t, &list.Items[0]); s != tc.want {
			t.Errorf("%s list %s: %s, want %s", tc.user, tc.name, s, tc.want)
		}
	}
}

// checkMixedList lists with an item redacted and one not: encoded and
// decoded objects in one response.
func checkMixedList(ctx context.Context, t *testing.T, cfg *rest.Config) {
	t.Helper()
	cs, err := clientset.NewForConfig(asUser(cfg, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	all, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("app").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("alice lists every output: %v", err)
	}
	want := map[string]string{"from-secure": "visible", "from-other": "redacted"}
	if len(all.Items) != len(want) {
		t.Fatalf("alice lists %d items, want %d", len(all.Items), len(want))
	}
	for i := range all.Items {
		if s := secretOf(t, &all.Items[i]); s != want[all.Items[i].Name] {
			t.Errorf("alice list of all: %s is %s, want %s", all.Items[i].Name, s, want[all.Items[i].Name])
		}
	}
}

// checkWatchesPerUser has two watchers, each with its own access, see the
// same change.
func checkWatchesPerUser(ctx context.Context, t *testing.T, cfg *rest.Config, store *versioned.Store[*encoded.Object]) {
	t.Helper()
	wa, wb := watchSecretOfNew(ctx, t, cfg, store, "alice"), watchSecretOfNew(ctx, t, cfg, store, "bob")
	// Both watches resume from the resourceVersion before the change.
	store.Apply([]versioned.Change[*encoded.Object]{{Namespace: "app", Name: "new", Object: stored(t, policyObject("new", "secure"))}})
	for _, w := range []struct {
		user string
		ch   <-chan string
		want string
	}{{"alice", wa, "visible"}, {"bob", wb, "redacted"}} {
		select {
		case s := <-w.ch:
			if s != w.want {
				t.Errorf("%s's watch: %s, want %s", w.user, s, w.want)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s's watch: no event", w.user)
		}
	}
}

// watchSecretOfNew watches the output "new" as user name from the store's
// current resourceVersion and sends what its first event shows of the secret.
func watchSecretOfNew(ctx context.Context, t *testing.T, cfg *rest.Config, store *versioned.Store[*encoded.Object], name string) <-chan string {
	t.Helper()
	cs, err := clientset.NewForConfig(asUser(cfg, name))
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("app").Watch(ctx, metav1.ListOptions{
		ResourceVersion: fmt.Sprint(store.ResourceVersion()), FieldSelector: "metadata.name=new",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	out := make(chan string, 1)
	go func() {
		for e := range w.ResultChan() {
			if p, ok := e.Object.(*v1alpha1.EffectivePolicy); ok {
				out <- secretOf(t, p)
				return
			}
		}
	}()
	return out
}
