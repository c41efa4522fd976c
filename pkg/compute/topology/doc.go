// Package topology holds what names a node of the engine's hierarchy
// (GatewayClass, Gateway, ListenerSet, listener, route, rule, Service, port):
// NodeID, its order and the Gateway API groups and route kinds. It is
// separate because every other part of the engine speaks of nodes —
// attachments, contexts, the profiles of the implementations — while none
// of them needs the graph itself, which the engine's state keeps.
package topology
