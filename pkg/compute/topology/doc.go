// Package topology is the topology of the engine's hierarchy (GatewayClass,
// Gateway, ListenerSet, listener, route, rule, Service, port): what names a
// node (NodeID, its order, its level), the topology objects as parsed from
// inputs of any shape, and listener and route hostnames. It is separate
// because every other part of the engine speaks of nodes — attachments,
// contexts, the profiles of the implementations — while none of them needs
// to know how a Gateway or a route is read. The graph over these objects
// (Graph: parents, children, walks) lives here too, as it needs nothing
// but them: the keys, policies and generations the engine derives from
// the graph stay in the engine, which holds one Graph and guards it with
// its own lock.
package topology
