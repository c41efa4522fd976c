// Command kube-apiserver is the upstream kube-apiserver, run in-process so that the Service
// resolver can be replaced (app.SetServiceResolverForTests).
//
// There is no kube-proxy on a local control plane: a Service's cluster IP leads nowhere, and
// Endpoints/EndpointSlices may not hold loopback addresses. So the aggregator could never reach
// an extension API server running on 127.0.0.1. This binary resolves the Service named by
// --ep-service (default effectivepolicy-system/effectivepolicy-apiserver) to
// https://127.0.0.1:<port>, picking a live port from --ep-ports (comma-separated; read again on
// every request from --ep-ports-file if given, so a restarted server may move). The
// "kubernetes" Service in "default" resolves to this kube-apiserver itself, as upstream does.
// Every other Service is unresolvable.
//
// The --ep-* flags are removed from the command line before kube-apiserver parses it; the
// environment variables EP_SERVICE, EP_PORTS and EP_PORTS_FILE are read as defaults.
package main

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	_ "time/tzdata"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

type localResolver struct {
	namespace, name string
	ports           []string
	portsFile       string
	securePort      string
	next            atomic.Uint64
}

func (r *localResolver) currentPorts() []string {
	if r.portsFile != "" {
		if b, err := os.ReadFile(r.portsFile); err == nil {
			if ps := splitPorts(string(b)); len(ps) > 0 {
				return ps
			}
		}
	}
	return r.ports
}

func splitPorts(s string) []string {
	var out []string
	for _, p := range strings.FieldsFunc(s, func(c rune) bool { return c == ',' || c == ' ' || c == '\n' || c == '\t' }) {
		if _, err := strconv.Atoi(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func live(port string) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", port), 300*time.Millisecond)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// ResolveEndpoint implements webhook.ServiceResolver.
func (r *localResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	if namespace == "default" && name == "kubernetes" {
		return &url.URL{Scheme: "https", Host: net.JoinHostPort("127.0.0.1", r.securePort)}, nil
	}
	if namespace != r.namespace || name != r.name {
		return nil, fmt.Errorf("local control plane: service %s/%s is not resolvable (only %s/%s is)", namespace, name, r.namespace, r.name)
	}
	ports := r.currentPorts()
	if len(ports) == 0 {
		return nil, fmt.Errorf("local control plane: no port configured for service %s/%s", namespace, name)
	}
	// Round-robin over the live ports; if none is live, still answer the first one so the
	// aggregator reports a connection error rather than a resolution error.
	start := r.next.Add(1)
	for i := range ports {
		p := ports[(int(start)+i)%len(ports)]
		if live(p) {
			return &url.URL{Scheme: "https", Host: net.JoinHostPort("127.0.0.1", p)}, nil
		}
	}
	return &url.URL{Scheme: "https", Host: net.JoinHostPort("127.0.0.1", ports[0])}, nil
}

// takeFlag removes --name=value or --name value from args and returns the value.
func takeFlag(args []string, name string) ([]string, string, bool) {
	out := args[:0:0]
	val, found := "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "--"+name+"="):
			val, found = strings.TrimPrefix(a, "--"+name+"="), true
		case a == "--"+name && i+1 < len(args):
			val, found = args[i+1], true
			i++
		default:
			out = append(out, a)
		}
	}
	return out, val, found
}

func main() {
	args := os.Args[1:]
	service := os.Getenv("EP_SERVICE")
	ports := os.Getenv("EP_PORTS")
	portsFile := os.Getenv("EP_PORTS_FILE")
	if service == "" {
		service = "effectivepolicy-system/effectivepolicy-apiserver"
	}
	var v string
	var ok bool
	if args, v, ok = takeFlag(args, "ep-service"); ok {
		service = v
	}
	if args, v, ok = takeFlag(args, "ep-ports"); ok {
		ports = v
	}
	if args, v, ok = takeFlag(args, "ep-ports-file"); ok {
		portsFile = v
	}
	securePort := "6443"
	for _, a := range args {
		if strings.HasPrefix(a, "--secure-port=") {
			securePort = strings.TrimPrefix(a, "--secure-port=")
		}
	}
	ns, name, okSplit := strings.Cut(service, "/")
	if !okSplit || ns == "" || name == "" {
		fmt.Fprintf(os.Stderr, "--ep-service must be namespace/name, got %q\n", service)
		os.Exit(2)
	}
	r := &localResolver{namespace: ns, name: name, ports: splitPorts(ports), portsFile: portsFile, securePort: securePort}
	klog.Infof("local control plane: resolving service %s/%s to 127.0.0.1 ports %v (ports file %q)", ns, name, r.ports, portsFile)
	defer app.SetServiceResolverForTests(r)()

	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(args)
	os.Exit(cli.Run(cmd))
}
