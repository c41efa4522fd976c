// Package gep is the GEP profile: docs/spec.md §5 as written (GEP-713 and GEP-2649),
// the default of every policy kind whose descriptor names no implementation.
// Its fold (Fold, FoldOf) is also the one other profiles fall back on once
// they have picked the entries that count. It is a folder of its own, like
// every implementation, so that each profile is read and changed alone.
package gep
