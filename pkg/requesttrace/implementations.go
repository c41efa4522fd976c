package requesttrace

// Hostname matching modes, as RequestTrace status reports them.
const (
	// MostSpecificHost: the data plane builds one virtual host (server
	// block) per hostname and binds a request to the most specific one; a
	// request its routes do not match gets a 404.
	MostSpecificHost = "MostSpecificHost"
	// Precedence: one precedence order over the rules of every route that
	// serves the host, as the Gateway API specification words it.
	Precedence = "Precedence"
)

// virtualHostControllers are the GatewayClass controllerNames of the
// implementations that match per virtual host, read from their sources
// (docs/research/hostname-fallthrough.md): Envoy Gateway (one Envoy
// virtual host per hostname), NGINX Gateway Fabric (one server block per
// hostname) and Istio (one virtual host per hostname; Kuadrant's Gateways
// are Istio's or Envoy Gateway's, so its policies meet the same matching).
var virtualHostControllers = map[string]bool{
	"gateway.envoyproxy.io/gatewayclass-controller": true,
	"gateway.nginx.org/nginx-gateway-controller":    true,
	"istio.io/gateway-controller":                   true,
}

// hostnameMatching returns the matching mode of a Gateway whose class has
// controllerName: the specification's for implementations not known to
// differ from it.
func hostnameMatching(controllerName string) string {
	if virtualHostControllers[controllerName] {
		return MostSpecificHost
	}
	return Precedence
}
