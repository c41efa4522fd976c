package requestmatch

import (
	"fmt"
	"sort"
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/hostname"
)

// Match traces req through every listener of gw that would take it: one
// Result per port (and transport) that has a listener for the request's
// host, sorted by port. When no listener takes the request, the single
// Result says why (no listeners, none on the port, none for the host).
func Match(gw Gateway, req Request) []Result {
	host := normalizeHost(req.Host)
	chosen, fail := SelectListeners(gw.Listeners, req)
	if len(chosen) == 0 {
		fail.GatewayNamespace, fail.GatewayName = gw.Namespace, gw.Name
		return []Result{fail}
	}
	out := make([]Result, 0, len(chosen))
	for _, i := range chosen {
		res := matchListener(&gw.Listeners[i], req, host)
		res.GatewayNamespace, res.GatewayName = gw.Namespace, gw.Name
		out = append(out, res)
	}
	return out
}

// SelectListeners returns the indexes of the listeners that take req, one
// per port and transport (UDP apart from the rest), sorted by port. On each
// port the listener whose hostname matches the host most specifically wins:
// exact over wildcard over none (gateway_types.go, "Listeners that are
// distinct only by Hostname"); TCP and UDP listeners match by port alone.
// Listeners that tie keep list order, the first wins. When none takes the
// request, the Result says why.
func SelectListeners(listeners []Listener, req Request) ([]int, Result) {
	host := normalizeHost(req.Host)
	if len(listeners) == 0 {
		return nil, Result{Reason: ReasonNoListeners, Message: "the gateway has no listeners"}
	}
	type slot struct {
		port int32
		udp  bool
	}
	best := map[slot]int{}
	bestRank := map[slot]listenerRank{}
	onPort := 0
	for i := range listeners {
		l := &listeners[i]
		if req.Port != 0 && l.Port != req.Port {
			continue
		}
		if req.Protocol != "" && !strings.EqualFold(string(req.Protocol), string(l.Protocol)) {
			continue
		}
		onPort++
		rank, ok := listenerTakes(l, host)
		if !ok {
			continue
		}
		s := slot{port: l.Port, udp: isProtocol(l.Protocol, ProtocolUDP)}
		if cur, seen := bestRank[s]; !seen || cur.less(rank) {
			best[s], bestRank[s] = i, rank
		}
	}
	if onPort == 0 {
		return nil, Result{Port: req.Port, Reason: ReasonNoListenerOnPort, Message: noListenerOnPort(req)}
	}
	if len(best) == 0 {
		msg := fmt.Sprintf("no listener for host %q", host)
		if req.Port != 0 {
			msg = fmt.Sprintf("no listener on port %d for host %q", req.Port, host)
		}
		return nil, Result{Port: req.Port, Reason: ReasonNoListenerForHost, Message: msg}
	}
	out := make([]int, 0, len(best))
	for _, i := range best {
		out = append(out, i)
	}
	sort.Slice(out, func(a, b int) bool {
		la, lb := &listeners[out[a]], &listeners[out[b]]
		if la.Port != lb.Port {
			return la.Port < lb.Port
		}
		return out[a] < out[b]
	})
	return out, Result{}
}

// listenerTakes reports whether listener l accepts a request for host, and
// how specifically. TCP and UDP carry no hostname, so they take any request
// on their port with the lowest rank.
func listenerTakes(l *Listener, host string) (listenerRank, bool) {
	if isProtocol(l.Protocol, ProtocolTCP) || isProtocol(l.Protocol, ProtocolUDP) {
		return listenerRank{}, true
	}
	h := strings.ToLower(l.Hostname)
	if !hostname.Matches(h, host) {
		return listenerRank{}, false
	}
	return rankListenerHostname(h), true
}

func noListenerOnPort(req Request) string {
	switch {
	case req.Port != 0 && req.Protocol != "":
		return fmt.Sprintf("no %s listener on port %d", req.Protocol, req.Port)
	case req.Port != 0:
		return fmt.Sprintf("no listener on port %d", req.Port)
	default:
		return fmt.Sprintf("no %s listener", req.Protocol)
	}
}

func isProtocol(p, want Protocol) bool { return strings.EqualFold(string(p), string(want)) }
