package topology

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// The Gateway API groups: the standard channel's and the experimental one's.
const (
	GatewayGroup      = "gateway.networking.k8s.io"
	ExperimentalGroup = "gateway.networking.x-k8s.io"
)

// NodeID names a node of the hierarchy: an object, or a section of one.
type NodeID struct {
	Group, Kind, Namespace, Name, Section string
}

// Object is the node of n's object (n without its section).
func (n NodeID) Object() NodeID { n.Section = ""; return n }

// GK is the group/kind of n's object.
func (n NodeID) GK() schema.GroupKind {
	return schema.GroupKind{Group: n.Group, Kind: n.Kind}
}

// Ref is n as an ObjectReference of the API.
func (n NodeID) Ref() v1alpha1.ObjectReference {
	return v1alpha1.ObjectReference{Group: n.Group, Kind: n.Kind, Name: n.Name, Namespace: n.Namespace, SectionName: n.Section}
}

// String is "Kind namespace/name#section".
func (n NodeID) String() string {
	s := n.Kind + " "
	if n.Namespace != "" {
		s += n.Namespace + "/"
	}
	s += n.Name
	if n.Section != "" {
		s += "#" + n.Section
	}
	return s
}

// LessNode orders nodes by group, kind, namespace, name and section.
func LessNode(a, b NodeID) bool {
	if a.Group != b.Group {
		return a.Group < b.Group
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.Section < b.Section
}

// RouteKinds are the kinds of the Gateway API routes.
var RouteKinds = map[string]bool{"HTTPRoute": true, "GRPCRoute": true, "TLSRoute": true, "TCPRoute": true, "UDPRoute": true}

// IsRouteGK reports whether gk is a route kind of a Gateway API group.
func IsRouteGK(gk schema.GroupKind) bool {
	return (gk.Group == GatewayGroup || gk.Group == ExperimentalGroup) && RouteKinds[gk.Kind]
}
