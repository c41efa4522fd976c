// Package nginx is the NGINX Gateway Fabric profile (every policy kind of
// gateway.nginx.org v2.6): policies on one target add up unless a newer one
// overlaps an older one, which is then Conflicted on every target
// (semantics.WholePolicyRejecter); the inherited kinds' settings flow from the
// Gateway's NGINX blocks into its routes' as NGINX inherits directives; each
// kind takes effect only on the objects NGINX Gateway Fabric writes it for
// (semantics.ReachLimiter). It is a folder of its own, behind
// semantics.Profile, so that NGINX Gateway Fabric's rules are read and changed
// alone.
package nginx
