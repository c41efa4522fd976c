package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

// Options configure the server.
type Options struct {
	// Source answers the page's requests.
	Source Source
	// Namespace is the namespace whose objects the page shows; "" for
	// every namespace (-A).
	Namespace string
	// Port to listen on, on 127.0.0.1; 0 for a random free one.
	Port int
	// Out is where the URL is printed.
	Out io.Writer
}

// Server is the page's server; the zero value is not usable (New).
type Server struct {
	opts     Options
	token    string
	listener net.Listener
	handler  http.Handler
	// fixed keeps the EffectivePolicies of a source that cannot change
	// (--offline) once listed (focus.go).
	fixedMu sync.Mutex
	fixed   []runtime.Object
	// fixedGraphs are the graphs drawn from fixed, by focus.
	fixedGraphs graphCache
	// store is the one list and watch of a source that changes (a
	// Watcher), read by every /api/graph and every Live stream; life is
	// the context its watches run in, which ends when Serve returns.
	store *liveStore
	// reachStore is the same for the PolicyReaches, read by every
	// /api/reaches (the Policy view's list); it lists when first asked.
	reachStore *liveStore
	life       context.Context
	stopLife   context.CancelFunc
}

// New listens on 127.0.0.1 (only: the server acts with the user's
// credentials and must not be reachable from another machine).
func New(opts Options) (*Server, error) {
	if opts.Port < 0 || opts.Port > 65535 {
		return nil, fmt.Errorf("--port must be between 0 and 65535, not %d", opts.Port)
	}
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.Port)))
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	s := &Server{opts: opts, token: token, listener: l}
	s.life, s.stopLife = context.WithCancel(context.Background())
	if wt, ok := opts.Source.(Watcher); ok {
		s.store = newLiveStore("the effective policies", opts.Source.EffectivePolicies, wt.WatchEffectivePolicies, opts.Namespace)
		s.reachStore = newLiveStore("the policy reaches", opts.Source.PolicyReaches, wt.WatchPolicyReaches, opts.Namespace)
	}
	s.handler = newGuard(token, port, s.routes())
	return s, nil
}

// URL is the address to open: the page, with the per-run token.
func (s *Server) URL() string {
	return "http://" + s.listener.Addr().String() + "/?token=" + s.token
}

// Handler is the guarded handler (for tests).
func (s *Server) Handler() http.Handler { return s.handler }

// Serve prints the URL and serves until ctx ends. Online, the list of the
// page's EffectivePolicies starts with it, in the background: the URL is
// printed at once, and the page's first request waits for the list
// rather than starting another (docs/ui.md, "How the server reads the
// cluster").
func (s *Server) Serve(ctx context.Context) error {
	defer s.stopLife()
	if s.store != nil {
		// Its error, if any, is the first request's: that request lists again.
		go func() { _, _ = s.store.get(ctx, s.life) }()
	}
	if s.opts.Out != nil {
		fmt.Fprintf(s.opts.Out, "Serving the effective policies at\n\n  %s\n\nOpen it in a browser (only this URL carries the token). Ctrl-C stops.\n", s.URL())
	}
	// The requests' contexts end with ctx, so that the Live streams end
	// and Shutdown need not wait for them.
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	err := srv.Serve(s.listener)
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/graph", s.graph)
	mux.HandleFunc("/api/listing", s.listing)
	mux.HandleFunc("/api/target", s.target)
	mux.HandleFunc("/api/reaches", s.reaches)
	mux.HandleFunc("/api/reach", s.reach)
	mux.HandleFunc("/api/trace", s.trace)
	mux.HandleFunc(changePath, s.change)
	mux.HandleFunc("/api/live", s.live)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, _ *http.Request) { writeError(w, http.StatusNotFound, "no such endpoint") })
	mux.HandleFunc("/", serveAsset)
	return mux
}

// apiError is an error with the HTTP status to answer it with.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &apiError{status: http.StatusNotFound, msg: fmt.Sprintf(format, args...)}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	// An error here is the connection's: the status is sent, nothing is left to tell.
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
