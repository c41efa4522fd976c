// Package merge is the merge of policy specs: JSON values that remember,
// leaf by leaf, the entry that set them (Value), RFC 7386 merge patches
// whose lists the CRD schema marks x-kubernetes-list-type: map merge item by
// item on their keys (Patch, with the Schema compiled from a CRD schema), and
// the walk of the leaves that fieldSources are read from. It is separate
// because it is the leaf every other part of the engine builds on: it knows
// nothing of policies, topology or implementations, only of JSON values and
// their provenance, so each profile can use it without reaching into the
// engine.
package merge
