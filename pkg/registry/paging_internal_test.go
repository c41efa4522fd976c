package registry

import (
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func TestPagerExpiryAndBound(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	p := newPager()
	p.now = func() time.Time { return now }
	id := p.save("", "ns", nil, 7)
	tok := encodeToken(id, 0, 7)
	if _, _, rv, _, err := p.resume(tok, "ns"); err != nil || rv != 7 {
		t.Fatalf("resume: rv %d, %v", rv, err)
	}
	now = now.Add(snapshotTTL - time.Second)
	p.save(id, "ns", nil, 7) // a page served: the snapshot lives on
	now = now.Add(snapshotTTL - time.Second)
	if _, _, _, _, err := p.resume(tok, "ns"); err != nil {
		t.Fatalf("refreshed snapshot expired: %v", err)
	}
	now = now.Add(snapshotTTL)
	if _, _, _, _, err := p.resume(tok, "ns"); !apierrors.IsResourceExpired(err) {
		t.Fatalf("expired snapshot: got %v", err)
	}
	for i := 0; i < 3*maxSnapshots; i++ {
		p.save("", "ns", nil, uint64(i))
		now = now.Add(time.Millisecond)
	}
	if len(p.snaps) > maxSnapshots {
		t.Errorf("%d snapshots kept, at most %d", len(p.snaps), maxSnapshots)
	}
}
