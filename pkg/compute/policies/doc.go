// Package policies is what the engine knows of policy kinds and policies:
// descriptors (docs/spec.md §4: loaded from files, built in, or the conventions a
// CRD's label or schema implies), the profile each kind's semantics name
// picks, and the parsing of one policy into its targets, stanzas and
// strategies (or the reason it is Invalid). It is separate because reading
// a policy depends only on its kind and its own object, never on the
// topology or on other policies; the engine's state attaches what it parses.
package policies
