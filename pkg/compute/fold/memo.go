package fold

// The memo that computations share: contexts, folds and orders, with
// the validity of each.

import (
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

// memoShards is the number of independently locked parts of a memo table:
// enough that GOMAXPROCS goroutines computing keys rarely wait for each
// other on the small machines the server runs on.
const memoShards = 64

// shardMap is a map safe for concurrent use, split into shards with their
// own read-write lock. Values are immutable once stored: readers use them
// without a lock, and when two goroutines compute the same entry at the
// same time the first one stored wins and both use it.
type shardMap[K comparable, V any] struct {
	seed   maphash.Seed
	hash   func(maphash.Seed, K) uint64 // picks the shard; cheaper than the map's own hash
	shards [memoShards]mapShard[K, V]
}

type mapShard[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
	_  [40]byte // keep shards on separate cache lines
}

// newShardMap returns an empty map sized for about hint entries (growing
// maps entry by entry is a large part of a full computation).
func newShardMap[K comparable, V any](hint int, hash func(maphash.Seed, K) uint64) *shardMap[K, V] {
	sm := &shardMap[K, V]{seed: maphash.MakeSeed(), hash: hash}
	if hint > 0 {
		for i := range sm.shards {
			sm.shards[i].m = make(map[K]V, hint/memoShards+1)
		}
	}
	return sm
}

func (sm *shardMap[K, V]) shard(k K) *mapShard[K, V] {
	return &sm.shards[sm.hash(sm.seed, k)%memoShards]
}

func (sm *shardMap[K, V]) get(k K) (V, bool) {
	sh := sm.shard(k)
	sh.mu.RLock()
	v, ok := sh.m[k]
	sh.mu.RUnlock()
	return v, ok
}

// put stores v unless keep says the value already there is still good, and
// returns the value now stored.
func (sm *shardMap[K, V]) put(k K, v V, keep func(old V) bool) (V, bool) {
	sh := sm.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if old, ok := sh.m[k]; ok && keep != nil && keep(old) {
		return old, false
	}
	if sh.m == nil {
		sh.m = map[K]V{}
	}
	_, existed := sh.m[k]
	sh.m[k] = v
	return v, !existed
}

// Memo is what computations share: the contexts (vias) of each node and
// kind, valid until the next structural mutation; the folds per kind and
// via, and the established-first order of the policies at a node, which stay
// valid across mutations as long as the attachment generations of their
// nodes (attach.KindIndex.Gen) are unchanged. It is safe for concurrent use; every
// value in it is immutable.
type Memo struct {
	vias     *shardMap[memoKey, []via]
	folds    *shardMap[foldKey, *foldResult]
	sortedAt *shardMap[memoKey, orderedAt]
	strs     *shardMap[string, string] // interned messages
	nfolds   atomic.Int64              // fold entries stored (bounds the table)
	sgen     uint64                    // MemoInputs.StructGen the vias are valid for
	kgen     uint64                    // MemoInputs.KindsGen the whole memo is valid for
}

// MemoInputs is what a memo's validity and size depend on: the engine's
// generations and how large its inputs are.
type MemoInputs struct {
	// StructGen counts the mutations that may change the graph or the
	// attachment points: contexts are valid while it is unchanged.
	StructGen uint64
	// KindsGen counts rebuilds of the policy kinds: the whole memo is
	// valid while it is unchanged.
	KindsGen uint64
	// Nodes counts the graph's objects and virtual targets, Kinds the
	// policy kinds, Policies the policies.
	Nodes, Kinds, Policies int
}

type orderedAt struct {
	gen uint64 // attach.KindIndex.Gen of the node when sorted
	l   []*semantics.Policy
}

// NewMemo returns an empty memo, sized for a computation of every key when
// full is set. Sizing matters both ways: a full computation into small maps
// spends its time growing them, while an edit after DropMemo into maps sized
// for everything holds a large set of empty buckets (docs/benchmarks/README.md
// has the measurement).
func NewMemo(in MemoInputs, full bool) *Memo {
	nodes := in.Nodes * in.Kinds
	if !full {
		nodes = 0
	}
	return &Memo{
		vias:     newShardMap[memoKey, []via](nodes*3, hashMemoKey), // sections too
		folds:    newShardMap[foldKey, *foldResult](nodes/8, hashFoldKey),
		sortedAt: newShardMap[memoKey, orderedAt](in.Policies, hashMemoKey),
		strs:     newShardMap[string, string](1024, maphash.String),
		sgen:     in.StructGen,
		kgen:     in.KindsGen,
	}
}

// maxFoldsPer bounds the fold table relative to the inputs: folds of vias
// that no longer exist (after structural edits) are kept until the table
// holds more than this many per object and kind, then all are dropped.
const maxFoldsPer = 4

// ValidFor reports whether the memo can be used as is for in.
func (m *Memo) ValidFor(in MemoInputs) bool { return m.kgen == in.KindsGen && m.sgen == in.StructGen }

// Refresh returns a memo valid for in (m itself when it is; m may be nil),
// keeping what stays valid. The engine calls it with its read lock and its
// memo lock held (no mutation in between).
func (m *Memo) Refresh(in MemoInputs, full bool) *Memo {
	if m == nil || m.kgen != in.KindsGen {
		return NewMemo(in, full) // policy kinds (or their schemas) changed
	}
	if m.sgen != in.StructGen {
		// Graph edges or attachment points changed: contexts must be
		// rebuilt. Folds and orders carry their own validity stamps.
		n := &Memo{vias: newShardMap[memoKey, []via](0, hashMemoKey), folds: m.folds, sortedAt: m.sortedAt, strs: m.strs, sgen: in.StructGen, kgen: m.kgen}
		n.nfolds.Store(m.nfolds.Load())
		if limit := int64(maxFoldsPer*(in.Nodes+1)*max(in.Kinds, 1)) + 4096; n.nfolds.Load() > limit {
			n.folds = newShardMap[foldKey, *foldResult](0, hashFoldKey)
			n.sortedAt = newShardMap[memoKey, orderedAt](0, hashMemoKey)
			n.strs = newShardMap[string, string](1024, maphash.String)
			n.nfolds.Store(0)
		}
		return n
	}
	return m
}

// hashMemoKey spreads node keys over shards by name and section only: the
// names of a cluster's objects are diverse enough.
func hashMemoKey(seed maphash.Seed, k memoKey) uint64 {
	return maphash.String(seed, k.n.Name) + uint64(len(k.n.Section))
}

func hashFoldKey(seed maphash.Seed, k foldKey) uint64 { return maphash.String(seed, k.via) }

// intern returns the stored copy of s, so that outputs share their strings.
func (m *Memo) intern(s string) string {
	if v, ok := m.strs.get(s); ok {
		return v
	}
	v, _ := m.strs.put(s, s, func(string) bool { return true })
	return v
}
