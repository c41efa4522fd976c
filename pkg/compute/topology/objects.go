package topology

// The topology objects as the engine keeps them: the fields of each kind the hierarchy is
// derived from, parsed once (parse.go) from objects of any shape.

import (
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NamespaceNode is the node of Namespace ns.
func NamespaceNode(ns string) NodeID { return NodeID{Kind: "Namespace", Name: ns} }

// IsNamespaceNode reports whether n is a Namespace.
func IsNamespaceNode(n NodeID) bool { return n.Group == "" && n.Kind == "Namespace" }

// IsListenerSetGK reports whether gk is a ListenerSet kind (standard or experimental).
func IsListenerSetGK(gk schema.GroupKind) bool {
	return (gk.Group == GatewayGroup && gk.Kind == "ListenerSet") || (gk.Group == ExperimentalGroup && gk.Kind == "XListenerSet")
}

// IsTopologyGK reports the group/kinds whose objects are hierarchy nodes the
// engine models itself; they are never backends (that would make cycles).
func IsTopologyGK(gk schema.GroupKind) bool {
	switch {
	case gk.Group == GatewayGroup && (gk.Kind == "GatewayClass" || gk.Kind == "Gateway" || gk.Kind == "ReferenceGrant"):
		return true
	case IsRouteGK(gk), IsListenerSetGK(gk):
		return true
	case gk.Group == "" && gk.Kind == "Namespace":
		return true
	}
	return false
}

// Level ranks used to order attachment points (docs/spec.md §5.2: the entry attached
// higher first). A Namespace ranks just above the object it is inserted over.
const (
	LevelGatewayClass = 0
	LevelNamespace    = 10
	LevelGateway      = 20 // also a mesh route's Service (fold.Session.meshFrontContexts)
	LevelListenerSet  = 25
	LevelListener     = 30 // also a mesh route's Service port
	LevelRoute        = 50
	LevelRule         = 56
	LevelBackend      = 80
	LevelPort         = 86
)

// LevelOf is n's level rank.
func LevelOf(n NodeID) int {
	switch {
	case n.Group == GatewayGroup && n.Kind == "GatewayClass":
		return LevelGatewayClass
	case n.Group == GatewayGroup && n.Kind == "Gateway":
		if n.Section != "" {
			return LevelListener
		}
		return LevelGateway
	case IsListenerSetGK(n.GK()):
		if n.Section != "" {
			return LevelListener
		}
		return LevelListenerSet
	case IsRouteGK(n.GK()):
		if n.Section != "" {
			return LevelRule
		}
		return LevelRoute
	case IsNamespaceNode(n):
		return LevelNamespace
	}
	if n.Section != "" {
		return LevelPort
	}
	return LevelBackend
}

// Listener is a listener of a Gateway or ListenerSet.
type Listener struct {
	Name     string
	Port     int64
	From     string // Same, All, Selector
	Selector labels.Selector
	Kinds    []schema.GroupKind // nil: by protocol
	Protocol string
	Hostname string       // "" matches every route hostname
	TLS      *ListenerTLS // the tls block; nil without one
}

// ListenerTLS is a listener's tls block, as written: a profile whose kind needs the listener to
// terminate TLS with certificates of its own reads it (semantics.ListenerReach).
type ListenerTLS struct {
	Mode            string // "" when unset (the CRD defaults it to Terminate)
	CertificateRefs []CertificateRef
}

// CertificateRef is one of a listener's tls.certificateRefs, each field as written ("" when
// unset: the CRD defaults group to core "" and kind to Secret).
type CertificateRef struct {
	Group, Kind, Namespace, Name string
}

// Gateway is a Gateway: its class, listeners and which ListenerSets it allows.
type Gateway struct {
	ID                  NodeID
	Class               string
	Listeners           []Listener
	ListenerSetsFrom    string // allowedListeners.namespaces.from (None by default)
	ListenerSetSelector labels.Selector
}

// ListenerSet is a ListenerSet: its Gateway and listeners.
type ListenerSet struct {
	ID        NodeID
	Parent    NodeID // the Gateway
	Listeners []Listener
}

// ParentRef is a parentRef of a route.
type ParentRef struct {
	ID      NodeID // Gateway, ListenerSet or (mesh) Service object
	Section string
	Port    int64
}

// Mesh reports whether the parentRef names a Service (GAMMA): the route
// hangs under the Service, or under the port the parentRef selects.
func (pr ParentRef) Mesh() bool { return IsServiceNode(pr.ID) }

// IsServiceNode reports whether n is a core Service or one of its ports.
func IsServiceNode(n NodeID) bool { return n.Group == "" && n.Kind == "Service" }

// MeshRouteKinds are the route kinds GAMMA lets a Service parent.
func MeshRouteKinds(kind string) bool { return kind == "HTTPRoute" || kind == "GRPCRoute" }

// Rule is a rule of a route.
type Rule struct {
	// Section is the rule's Section node: its name, or for an unnamed rule
	// rule-<index+1>, which only profiles that address unnamed rules so
	// (Kuadrant) may target; for every other kind it is not a Section.
	Section  string
	Unnamed  bool
	Backends []NodeID
	// HTTPRoute rules only: the backendRefs naming HTTPRoutes (kgateway's delegation,
	// delegation.go) and the matches.
	Delegates []DelegateRef
	Matches   []RouteMatch
}

// Route is a route of any of the five kinds.
type Route struct {
	ID         NodeID
	ParentRefs []ParentRef
	Rules      []Rule
	Hostnames  []string  // spec.hostnames (HTTPRoute, GRPCRoute, TLSRoute); none matches every listener
	Created    time.Time // read by request traces only
	// For kgateway's delegation (delegation.go): whether spec.parentRefs has entries, the
	// HTTPRoutes it names, and the kept annotations (RouteAnnotations).
	HasParentRefs bool
	RouteParents  []NodeID
	Annotations   map[string]string
}

// Service is a core Service: its ports.
type Service struct {
	ID    NodeID
	Ports []ServicePort
}

// ServicePort is an entry of spec.ports; only a named one is a section node.
type ServicePort struct {
	Name string
	Port int64
}

// GrantFrom is an entry of a ReferenceGrant's from.
type GrantFrom struct{ Group, Kind, Namespace string }

// GrantTo is an entry of a ReferenceGrant's to.
type GrantTo struct{ Group, Kind, Name string }

// ReferenceGrant is a ReferenceGrant: what it lets refer to what.
type ReferenceGrant struct {
	From []GrantFrom
	To   []GrantTo
}
