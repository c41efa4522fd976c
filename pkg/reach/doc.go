// Package reach builds PolicyReach and ClusterPolicyReach objects (docs/spec.md §8:
// what each policy reaches) from the EffectivePolicies the engine computed:
// every source entry of an output is one target its policy reaches, with
// the verdict that output gives it. An Index keeps those entries per output
// and per policy, so that recomputing an output tells exactly which
// policies' reaches changed; Build adds what the engine knows of the policy
// itself (kinds, class, named targets, labels). A reach is never computed
// apart from the outputs, so the two cannot disagree.
package reach
