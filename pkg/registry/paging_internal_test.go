package registry

import (
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestPagerExpiryAndBound(t *testing.T) {
	c := clocktesting.NewFakeClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	p := newPagerWithClock(c)
	id := p.save("", "ns", nil, 7)
	tok := encodeToken(id, 0, 7)
	if _, _, rv, _, err := p.resume(tok, "ns"); err != nil || rv != 7 {
		t.Fatalf("resume: rv %d, %v", rv, err)
	}
	c.Step(snapshotTTL - time.Second)
	p.save(id, "ns", nil, 7) // a page served: the snapshot lives on
	c.Step(snapshotTTL - time.Second)
	if _, _, _, _, err := p.resume(tok, "ns"); err != nil {
		t.Fatalf("refreshed snapshot expired: %v", err)
	}
	c.Step(snapshotTTL)
	if _, _, _, _, err := p.resume(tok, "ns"); !apierrors.IsResourceExpired(err) {
		t.Fatalf("expired snapshot: got %v", err)
	}
	for i := 0; i < 3*maxSnapshots; i++ {
		p.save("", "ns", nil, uint64(i))
		c.Step(time.Millisecond)
	}
	if n := len(p.snaps.Keys()); n > maxSnapshots {
		t.Errorf("%d snapshots kept, at most %d", n, maxSnapshots)
	}
}
