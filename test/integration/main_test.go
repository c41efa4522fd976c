// Package integration starts effectivepolicy-apiserver in-process on
// 127.0.0.1 (random port, no kube-apiserver: delegated authentication and
// authorization are switched off the supported way, with nil options) and
// drives it with the generated clientset, informers and plain HTTP.
package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/cmd/effectivepolicy-apiserver/app"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	clientset "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/requesttrace"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/versioned"
)

// change is a put or delete of an output, in the form the live layer
// stores and the REST layer serves.
type change = versioned.Change[*encoded.Object]

// historySize is small so that a test can push a resourceVersion out of the
// watch history.
const historySize = 64

var (
	// The stores the server serves from; tests feed them directly. Each test
	// uses its own namespaces / names.
	epStore  *versioned.Store[*encoded.Object]
	cepStore *versioned.Store[*encoded.Object]
	// baseConfig reaches the server (loopback config: CA and host set).
	baseConfig *rest.Config

	// notReady makes the test readyz check fail; postStartRan records that
	// the configured post-start hook ran.
	notReady     atomic.Bool
	postStartRan atomic.Bool

	// requests records the URLs the server received (see recordRequests).
	requestsMu sync.Mutex
	requests   []string
)

func TestMain(m *testing.M) {
	ctx, cancel := context.WithCancel(context.Background())
	stopped, err := startServer(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the server:", err)
		cancel()
		os.Exit(1)
	}
	code := m.Run()
	cancel()
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		fmt.Fprintln(os.Stderr, "server did not stop in 30s")
	}
	os.Exit(code)
}

func startServer(ctx context.Context) (<-chan struct{}, error) {
	certDir, err := os.MkdirTemp("", "effectivepolicy-integration")
	if err != nil {
		return nil, err
	}
	o, err := serverOptions(certDir)
	if err != nil {
		return nil, err
	}
	// The generic config only: the tests feed their own stores instead of
	// the live layer, which would need a cluster to watch.
	c, err := o.GenericConfig()
	if err != nil {
		return nil, err
	}
	epStore = versioned.New[*encoded.Object](versioned.Options{Namespaced: true, HistorySize: historySize, Resource: v1alpha1.Resource("effectivepolicies")})
	cepStore = versioned.New[*encoded.Object](versioned.Options{HistorySize: historySize, Resource: v1alpha1.Resource("clustereffectivepolicies")})
	c.EffectivePolicies = epStore
	c.ClusterEffectivePolicies = cepStore
	c.PolicyReaches = versioned.New[*encoded.Object](versioned.Options{Namespaced: true, HistorySize: historySize, Resource: v1alpha1.Resource("policyreaches")})
	c.ClusterPolicyReaches = versioned.New[*encoded.Object](versioned.Options{HistorySize: historySize, Resource: v1alpha1.Resource("clusterpolicyreaches")})
	// RequestTraces over an empty engine: served, and every trace finds no Gateway.
	engine, err := compute.NewEngine(compute.Options{})
	if err != nil {
		return nil, err
	}
	c.RequestTraces = engineSource{engine}
	c.Reviews = engineSource{engine}
	c.ReadyzChecks = append(c.ReadyzChecks, healthz.NamedCheck("test-gate", func(*http.Request) error {
		if notReady.Load() {
			return errors.New("not ready")
		}
		return nil
	}))
	c.PostStartHooks = map[string]genericapiserver.PostStartHookFunc{
		"test-hook": func(genericapiserver.PostStartHookContext) error { postStartRan.Store(true); return nil },
	}
	baseConfig = rest.CopyConfig(c.GenericConfig.LoopbackClientConfig)
	baseConfig.BearerToken = ""
	baseConfig.Wrap(recordRequests)

	s, err := c.Complete().New()
	if err != nil {
		return nil, err
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		defer os.RemoveAll(certDir)
		if err := s.GenericAPIServer.PrepareRun().RunWithContext(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "server:", err)
		}
	}()

	if err := waitReady(ctx); err != nil {
		return nil, err
	}
	return stopped, nil
}

// serverOptions are the server's options, validated, for serving on a random
// port of 127.0.0.1 with its certificates in certDir.
func serverOptions(certDir string) (*app.Options, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	o := app.NewOptions()
	ro := o.RecommendedOptions
	// No kube-apiserver: no delegated authn/authz, no core client.
	ro.Authentication = nil
	ro.Authorization = nil
	ro.CoreAPI = nil
	ro.SecureServing.Listener = ln
	ro.SecureServing.BindAddress = net.ParseIP("127.0.0.1")
	ro.SecureServing.BindPort = ln.Addr().(*net.TCPAddr).Port
	ro.SecureServing.ServerCert.CertDirectory = certDir
	o.WatchHistorySize = historySize
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return o, nil
}

// waitReady polls /readyz (without recording the requests) until it is OK.
func waitReady(ctx context.Context) error {
	cs, err := clientset.NewForConfig(withoutRecording(baseConfig))
	if err != nil {
		return err
	}
	client := cs.Discovery().RESTClient()
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		status := 0
		client.Get().AbsPath("/readyz").Do(ctx).StatusCode(&status)
		return status == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("server not ready: %w", err)
	}
	return nil
}

type recorder struct{ rt http.RoundTripper }

func (r recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	requestsMu.Lock()
	requests = append(requests, req.Method+" "+req.URL.RequestURI())
	requestsMu.Unlock()
	return r.rt.RoundTrip(req)
}

func recordRequests(rt http.RoundTripper) http.RoundTripper { return recorder{rt} }

// takeRequests returns and forgets the recorded requests.
func takeRequests() []string {
	requestsMu.Lock()
	defer requestsMu.Unlock()
	r := requests
	requests = nil
	return r
}

func withoutRecording(c *rest.Config) *rest.Config {
	c = rest.CopyConfig(c)
	c.WrapTransport = nil
	return c
}

// engineSource serves traces from an engine that is always ready.
type engineSource struct{ e *compute.Engine }

func (s engineSource) TraceTopology(context.Context) (requesttrace.Topology, error) { return s.e, nil }

func (s engineSource) Review(_ context.Context, p compute.Proposal) ([]compute.Outcome, error) {
	return s.e.WhatIf(p)
}
