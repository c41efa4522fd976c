package app

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/render"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"
)

type traceOptions struct {
	*Options
	gateway  string
	port     int32
	request  v1alpha1.TracedRequest
	headers  []string
	queries  []string
	protocol string
}

func newTraceCommand(o *Options) *cobra.Command {
	t := &traceOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "trace --host HOST [--path PATH] [--method METHOD] [--header K=V...] [--port N] [--gateway NS/NAME]",
		Short: "What happens to a request: listener, route, rule, backends and their policies",
		Long: `Trace asks what happens to one request (a RequestTrace, created and answered,
never stored): for each Gateway and port whose listener takes it, the route and
rule Gateway API's precedence chooses, the backends, and per policy kind the
effective entry of exactly that path (and of each backend on it).

Without --gateway every Gateway is tried.`,
		Example: `  kubectl effectivepolicy trace --host baker.cupcakes.example --path /orders
  kubectl effectivepolicy trace --gateway infra/cupcakes --port 80 --host baker.cupcakes.example --header x-env=canary
  kubectl effectivepolicy trace --host baker.cupcakes.example --offline -f manifests/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return t.run(cmd) },
	}
	addHTMLFlag(cmd, o)
	f := cmd.Flags()
	f.StringVar(&t.gateway, "gateway", "", "Trace through this Gateway only: NAMESPACE/NAME, or NAME in the namespace of -n.")
	f.Int32Var(&t.port, "port", 0, "The port the request arrives on (default: every port).")
	f.StringVar(&t.request.Host, "host", "", "The request's host (Host header or SNI); required except for TCP and UDP.")
	f.StringVar(&t.request.Path, "path", "", "The request's path, with a query string if any (default /).")
	f.StringVar(&t.request.Method, "method", "", "The request's method (default GET, POST for gRPC).")
	f.StringArrayVar(&t.headers, "header", nil, "A request header NAME=VALUE (repeatable).")
	f.StringArrayVar(&t.queries, "query", nil, "A query parameter NAME=VALUE (repeatable).")
	f.BoolVar(&t.request.GRPC, "grpc", false, "The request is a gRPC call (the path is /service/method).")
	f.StringVar(&t.protocol, "protocol", "", "The listener protocol: HTTP, HTTPS, TLS, TCP or UDP (default: any).")
	return cmd
}

// spec builds the RequestTrace the flags ask for.
func (t *traceOptions) spec(src Source) (*v1alpha1.RequestTrace, error) {
	rt := &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{Port: t.port, Request: t.request}}
	rt.Spec.Request.Protocol = t.protocol
	var err error
	if rt.Spec.Request.Headers, err = pairsOf("--header", t.headers); err != nil {
		return nil, err
	}
	if rt.Spec.Request.QueryParams, err = pairsOf("--query", t.queries); err != nil {
		return nil, err
	}
	if t.gateway != "" {
		ns, name, ok := strings.Cut(t.gateway, "/")
		if !ok {
			if ns, err = src.Namespace(); err != nil {
				return nil, err
			}
			name = t.gateway
		}
		rt.Spec.Gateway = &v1alpha1.GatewayReference{Namespace: ns, Name: name}
	}
	return rt, nil
}

// pairsOf parses NAME=VALUE flags.
func pairsOf(flag string, values []string) (map[string]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(values))
	for _, v := range values {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: want NAME=VALUE", flag, v)
		}
		m[k] = val
	}
	return m, nil
}

func (t *traceOptions) run(cmd *cobra.Command) error {
	src, err := t.source()
	if err != nil {
		return err
	}
	rt, err := t.spec(src)
	if err != nil {
		return err
	}
	answer, err := src.Trace(commandContext(cmd), rt)
	if err != nil {
		return err
	}
	root := render.Trace(answer)
	if err := t.writeHTML([]*tree.Node{root}, nil); err != nil {
		return err
	}
	if t.printsObjects() {
		return t.printObject(answer)
	}
	return t.printTrees(root)
}
