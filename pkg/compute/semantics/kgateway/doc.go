// Package kgateway is the kgateway profile (v2.2: TrafficPolicy, HTTPListenerPolicy,
// ListenerPolicy and BackendConfigPolicy of gateway.kgateway.dev): policies of a route rule,
// the route, the listener and the Gateway combine field by field, the more specific preferred,
// and at one level the older (or heavier) one; BackendConfigPolicies on one backend are
// applied in turn, so the newest sets each field. Each kind takes effect only on the objects
// kgateway translates it for (semantics.ReachLimiter). It is a folder of its own, behind
// semantics.Profile, so that kgateway's rules are read and changed alone.
package kgateway
