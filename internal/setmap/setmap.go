// Package setmap keeps an index of sets by key, a map[K]map[V]bool, with no
// empty set left behind: the engine's indexes of the topology and of its
// policies are all of this shape, and a set left empty would keep a key
// alive that no object names any more. Counted sets, map[K]map[V]int, are
// kept the same way (AddCount).
package setmap

// Add puts v in the set of k, making the set when k has none.
func Add[K comparable, V comparable](m map[K]map[V]bool, k K, v V) {
	s := m[k]
	if s == nil {
		s = map[V]bool{}
		m[k] = s
	}
	s[v] = true
}

// Remove takes v out of the set of k, and k out of m when its set is left
// empty.
func Remove[K comparable, V comparable](m map[K]map[V]bool, k K, v V) {
	if s := m[k]; s != nil {
		delete(s, v)
		if len(s) == 0 {
			delete(m, k)
		}
	}
}

// AddCount adds d to the count of v under k, dropping counts that reach
// zero and maps left empty.
func AddCount[K comparable, V comparable](m map[K]map[V]int, k K, v V, d int) {
	c := m[k]
	if c == nil {
		c = map[V]int{}
		m[k] = c
	}
	c[v] += d
	if c[v] <= 0 {
		delete(c, v)
	}
	if len(c) == 0 {
		delete(m, k)
	}
}
