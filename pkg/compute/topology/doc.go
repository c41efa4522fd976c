// Package topology is the topology of the engine's hierarchy (GatewayClass,
// Gateway, ListenerSet, listener, route, rule, Service, port): what names a
// node (NodeID, its order, its level), the topology objects as parsed from
// inputs of any shape, and listener and route hostnames. It is separate
// because every other part of the engine speaks of nodes — attachments,
// contexts, the profiles of the implementations — while none of them needs
// to know how a Gateway or a route is read; the graph over these objects
// (parents, children, walks) is still kept by the engine's state.
package topology
