package offline

import (
	"strings"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/manifests"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// attachedManifests: a Gateway with a listener per host, and routes that
// attach by sectionName, by hostname, to nothing (no listener admits
// their host), or to another Gateway.
const attachedManifests = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: public, namespace: infra}
spec:
  gatewayClassName: any
  listeners:
  - {name: shop, port: 80, protocol: HTTP, hostname: shop.example, allowedRoutes: {namespaces: {from: All}}}
  - {name: blog, port: 80, protocol: HTTP, hostname: blog.example, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: private, namespace: infra}
spec:
  gatewayClassName: any
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cart, namespace: app}
spec:
  parentRefs: [{name: public, namespace: infra, sectionName: shop}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: posts, namespace: app}
spec:
  parentRefs: [{name: public, namespace: infra}]
  hostnames: [blog.example]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: stray, namespace: app}
spec:
  parentRefs: [{name: public, namespace: infra}]
  hostnames: [other.example]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: admin, namespace: app}
spec:
  parentRefs: [{name: private, namespace: infra}]
`

// TestAttached: the routes attached to a Gateway, or to one listener, by
// the hierarchy's rules (docs/spec.md §3).
func TestAttached(t *testing.T) {
	objs, err := manifests.Parse("attached", []byte(attachedManifests))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(manifests.Complete(objs, manifests.Scope{}), compute.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		namespace, name, section string
		want                     string // route names; "-" when no such Gateway
	}{
		{"infra", "public", "", "app/cart app/posts"},
		{"infra", "public", "shop", "app/cart"},
		{"infra", "public", "blog", "app/posts"},
		{"infra", "public", "none", ""},
		{"infra", "private", "", "app/admin"},
		{"infra", "nope", "", "-"},
		{"app", "public", "", "-"},
	}
	for _, tc := range cases {
		refs, ok := c.Attached(tc.namespace, tc.name, tc.section)
		got := "-"
		if ok {
			var names []string
			for _, r := range refs {
				if r.Kind != "HTTPRoute" {
					t.Errorf("%v: a %s", tc, r.Kind)
				}
				names = append(names, r.Namespace+"/"+r.Name)
			}
			got = strings.Join(names, " ")
		}
		if got != tc.want {
			t.Errorf("Attached(%s, %s, %q) = %q, want %q", tc.namespace, tc.name, tc.section, got, tc.want)
		}
	}
}
