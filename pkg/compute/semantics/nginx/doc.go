// Package nginx is the NGINX Gateway Fabric profile (ClientSettingsPolicy,
// UpstreamSettingsPolicy, ObservabilityPolicy): policies on one target add
// up unless a newer one overlaps an older one, which is then Conflicted on
// every target (semantics.WholePolicyRejecter). It is a folder of its own,
// behind semantics.Profile, so that NGINX Gateway Fabric's rules are read and
// changed alone.
package nginx
