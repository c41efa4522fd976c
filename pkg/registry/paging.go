package registry

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/utils/clock"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

// Paging (limit/continue). A LIST with a limit answers the first page and,
// when more remain, a continue token. The pages that follow are cut from the
// same snapshot of the stored objects, so a paged list is consistent at the
// first page's resourceVersion, as an etcd-backed list is: the snapshot is
// the first page's sorted slice of (immutable, shared) objects, about 8 bytes
// per object. Snapshots live for snapshotTTL after their last page and at
// most maxSnapshots are kept; a token whose snapshot is gone (expired, or
// issued by another replica or before a restart) answers 410 Gone, as an
// etcd list whose resourceVersion was compacted does, and clients list
// again (client-go's pager does so by itself).
//
// Why it matters: kubectl asks for 500 objects at a time, and with paging
// ignored `kubectl get effectivepolicies -A` at the large benchmark size
// fetched, decoded and printed every object in one response, the server
// holding all of it decoded at once for a table or YAML.

const (
	snapshotTTL  = 5 * time.Minute // etcd's default compaction interval
	maxSnapshots = 16
)

type snapshot struct {
	// namespace is the request's: a token is only valid in the namespace
	// (or cluster-wide list) it was issued for, or it would let a caller
	// allowed in one namespace page through another's objects.
	namespace string
	objs      []*encoded.Object
	rv        uint64
}

// pager holds the snapshots of one REST storage: at most maxSnapshots, each
// for snapshotTTL after its last page, the least recently used dropped first
// (with one TTL for all, that is the one closest to expiry).
type pager struct {
	snaps *cache.LRUExpireCache
}

func newPager() *pager { return newPagerWithClock(clock.RealClock{}) }

func newPagerWithClock(c cache.Clock) *pager {
	return &pager{snaps: cache.NewLRUExpireCacheWithClock(maxSnapshots, c)}
}

// continueToken is the (base64-encoded JSON) continue token.
type continueToken struct {
	// ID names the snapshot.
	ID string `json:"id"`
	// Next is the index in the snapshot of the next object to consider.
	Next int `json:"next"`
	// RV is the snapshot's resourceVersion (for the reader; not trusted).
	RV uint64 `json:"rv"`
}

// save keeps objs (at rv) under a new snapshot id, or refreshes id.
func (p *pager) save(id, namespace string, objs []*encoded.Object, rv uint64) string {
	if id != "" {
		if s, ok := p.snaps.Get(id); ok {
			p.snaps.Add(id, s, snapshotTTL)
			return id
		}
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	id = hex.EncodeToString(b[:])
	p.snaps.Add(id, &snapshot{namespace: namespace, objs: objs, rv: rv}, snapshotTTL)
	return id
}

// resume returns the snapshot and position a token names.
func (p *pager) resume(token, namespace string) (id string, objs []*encoded.Object, rv uint64, next int, err error) {
	data, derr := base64.RawURLEncoding.DecodeString(token)
	var t continueToken
	if derr != nil || json.Unmarshal(data, &t) != nil || t.ID == "" || t.Next < 0 {
		return "", nil, 0, 0, apierrors.NewBadRequest("continue key is not valid")
	}
	v, ok := p.snaps.Get(t.ID)
	if !ok {
		return "", nil, 0, 0, apierrors.NewResourceExpired("the provided continue parameter is too old or was issued by another server instance; list again without it")
	}
	s := v.(*snapshot)
	if t.Next > len(s.objs) || s.namespace != namespace {
		return "", nil, 0, 0, apierrors.NewBadRequest("continue key is not valid")
	}
	return t.ID, s.objs, s.rv, t.Next, nil
}

func encodeToken(id string, next int, rv uint64) string {
	data, err := json.Marshal(continueToken{ID: id, Next: next, RV: rv})
	if err != nil {
		panic(fmt.Sprintf("encoding a continue token: %v", err)) // cannot happen
	}
	return base64.RawURLEncoding.EncodeToString(data)
}
