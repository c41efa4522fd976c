package versioned

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/resourceversion"
)

func recv(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case e, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	return watch.Event{}
}

func describe(e watch.Event) string {
	m := om(e.Object)
	return fmt.Sprintf("%s %s/%s@%s", e.Type, m.Namespace, m.Name, counter(m.ResourceVersion))
}

func TestWatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newStore(true, 0)
	s.Apply([]change{put("a", "x", "K")})                     // 1
	s.Apply([]change{put("a", "x", "L"), put("b", "y", "K")}) // 2, 3
	s.Apply([]change{del("a", "x")})                          // 4
	s.Apply([]change{put("a", "x", "K"), put("a", "z", "K")}) // 5, 6

	for _, tc := range []struct {
		name string
		ns   string
		rv   uint64
		want []string
	}{
		{"from 0", "", 0, []string{"ADDED a/x@1", "MODIFIED a/x@2", "ADDED b/y@3", "DELETED a/x@4", "ADDED a/x@5", "ADDED a/z@6"}},
		{"strictly after rv", "", at(3), []string{"DELETED a/x@4", "ADDED a/x@5", "ADDED a/z@6"}},
		// A client whose watch broke after the first event of a batch
		// resumes from it and gets the rest of the batch.
		{"resumed inside a batch", "", at(5), []string{"ADDED a/z@6"}},
		{"namespace", "b", 0, []string{"ADDED b/y@3"}},
		{"current", "", at(6), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := s.Watch(ctx, tc.ns, tc.rv)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			for _, want := range tc.want {
				if got := describe(recv(t, w)); got != want {
					t.Fatalf("got %s, want %s", got, want)
				}
			}
			// Then live events.
			s.Apply([]change{put("b", "live-"+tc.name, "K")})
			if got := describe(recv(t, w)); got[:8] != "ADDED b/" {
				t.Fatalf("live event: %s", got)
			}
		})
	}

	if _, err := s.Watch(ctx, "", s.ResourceVersion()+1); !apierrors.IsResourceExpired(err) {
		t.Errorf("future rv: %v", err)
	}
}

func TestHistoryAndGone(t *testing.T) {
	ctx := context.Background()
	s := newStore(true, 3)
	s.Apply([]change{put("a", "x", "K"), put("a", "y", "K")}) // 1, 2
	s.Apply([]change{put("a", "x", "L")})                     // 3
	s.Apply([]change{put("a", "x", "M")})                     // 4: history 1,2,3,4 > 3: rv 1 dropped
	if _, err := s.Watch(ctx, "", 0); !apierrors.IsResourceExpired(err) {
		t.Errorf("rv 0 after trimming: %v", err)
	}
	w, err := s.Watch(ctx, "", at(1))
	if err != nil {
		t.Fatalf("rv 1 is still resumable: %v", err)
	}
	if got := describe(recv(t, w)); got != "ADDED a/y@2" {
		t.Errorf("got %s", got)
	}
	w.Stop()
	s.Apply([]change{put("a", "x", "N")}) // 5: history 3,4,5
	s.Apply([]change{put("a", "x", "O")}) // 6: history 4,5,6
	if _, err := s.Watch(ctx, "", at(2)); !apierrors.IsResourceExpired(err) {
		t.Errorf("rv 2 after trimming: %v", err)
	}
	if _, err := s.Watch(ctx, "", at(3)); err != nil {
		t.Errorf("rv 3 should be resumable: %v", err)
	}

	// One Apply larger than the history: only its last events remain.
	s.Apply([]change{put("b", "1", "K"), put("b", "2", "K"), put("b", "3", "K"), put("b", "4", "K")}) // 7-10
	if _, err := s.Watch(ctx, "", at(6)); !apierrors.IsResourceExpired(err) {
		t.Errorf("rv 6: %v", err)
	}
	if _, err := s.Watch(ctx, "", at(7)); err != nil {
		t.Errorf("rv 7: %v", err)
	}
}

func TestWatchEndsWithContext(t *testing.T) {
	s := newStore(true, 0)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := s.Watch(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case _, ok := <-w.ResultChan():
		if ok {
			t.Error("unexpected event")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("watch not closed")
	}
	s.mu.RLock()
	n := len(s.watchers)
	s.mu.RUnlock()
	if n != 0 {
		t.Errorf("%d watchers left", n)
	}
}

// TestConcurrentWatchers applies from several goroutines while watchers
// (some slow, some starting late) read; every watcher sees every event after
// its start, in resourceVersion order, and Apply never blocks on a reader.
func TestConcurrentWatchers(t *testing.T) {
	const writers, perWriter, watchers = 4, 200, 8
	s := newStore(true, writers*perWriter*2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	type result struct {
		from   uint64
		events []watch.Event
	}
	results := make([]result, watchers)
	var readers sync.WaitGroup
	start := func(i int) {
		from := s.ResourceVersion()
		w, err := s.Watch(ctx, "", from)
		if err != nil {
			t.Error(err)
			return
		}
		results[i].from = from
		readers.Add(1)
		go func() {
			defer readers.Done()
			defer w.Stop()
			for e := range w.ResultChan() {
				if i%2 == 1 {
					time.Sleep(10 * time.Microsecond) // slow reader
				}
				results[i].events = append(results[i].events, e)
				if om(e.Object).Name == "done" {
					return
				}
			}
		}()
	}
	for i := 0; i < watchers/2; i++ {
		start(i)
	}
	var wg sync.WaitGroup
	for wr := 0; wr < writers; wr++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < perWriter; j++ {
				s.Apply([]change{put(fmt.Sprint("w", wr), fmt.Sprint(j%10), fmt.Sprint(j))})
			}
		}()
		if wr == writers/2 {
			for i := watchers / 2; i < watchers; i++ {
				start(i)
			}
		}
	}
	wg.Wait()
	final, _ := s.Apply([]change{put("z", "done", "K")})
	readers.Wait()

	for i, r := range results {
		// Every rv in (from, final] appears exactly once (each Apply changes one object).
		if uint64(len(r.events)) != final-r.from {
			t.Errorf("watcher %d from %d: %d events, want %d", i, r.from, len(r.events), final-r.from)
			continue
		}
		for j, e := range r.events {
			if want := fmt.Sprint(r.from + uint64(j) + 1); om(e.Object).ResourceVersion != want {
				t.Errorf("watcher %d event %d: rv %s, want %s", i, j, om(e.Object).ResourceVersion, want)
				break
			}
		}
	}
}

func TestBookmarks(t *testing.T) {
	s := New[*v1alpha1.EffectivePolicy](Options{Namespaced: true, BookmarkInterval: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := s.Watch(ctx, "b", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	s.Apply([]change{put("a", "x", "K")})
	s.Apply([]change{put("a", "y", "K")})
	// Nothing of namespace b happened, but the watch has seen everything up to rv 2.
	for {
		e := recv(t, w)
		if e.Type != watch.Bookmark {
			t.Fatalf("unexpected %s", e.Type)
		}
		if rv := e.Object.(*metav1.PartialObjectMetadata).ResourceVersion; rv == resourceversion.Format(resourceversion.Make(s.Epoch(), 2)) {
			break
		}
	}
	s.Apply([]change{put("b", "z", "K")})
	for {
		e := recv(t, w)
		if e.Type == watch.Bookmark {
			continue
		}
		if got := describe(e); got != "ADDED b/z@3" {
			t.Fatalf("got %s", got)
		}
		break
	}

	never := New[*v1alpha1.EffectivePolicy](Options{BookmarkInterval: -1})
	w2, _ := never.Watch(ctx, "", 0)
	defer w2.Stop()
	never.Apply([]change{put("", "x", "K")})
	recv(t, w2)
	select {
	case e := <-w2.ResultChan():
		t.Fatalf("unexpected %s", e.Type)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestSlowWatcherIsEnded(t *testing.T) {
	s := New[*v1alpha1.EffectivePolicy](Options{Namespaced: true, HistorySize: 10, BookmarkInterval: -1})
	ctx := context.Background()
	slow, err := s.Watch(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.Watch(ctx, "other", 0) // sees none of it
	if err != nil {
		t.Fatal(err)
	}
	defer other.Stop()
	for i := 0; i <= s.maxQueue()+1; i++ { // one more than the queue holds, plus one in flight
		s.Apply([]change{put("ns", "x", fmt.Sprint(i))})
	}
	// The slow watcher is ended: at most what was in flight arrives, then the channel closes.
	deadline := time.After(5 * time.Second)
	for n := 0; ; n++ {
		select {
		case _, ok := <-slow.ResultChan():
			if !ok {
				if n > 1 {
					t.Errorf("%d events delivered after overflow", n)
				}
				goto closed
			}
		case <-deadline:
			t.Fatal("slow watcher not ended")
		}
	}
closed:
	s.Apply([]change{put("other", "y", "K")})
	if got := describe(recv(t, other)); got != "ADDED other/y@"+fmt.Sprint(resourceversion.CounterOf(s.ResourceVersion())) {
		t.Errorf("other watcher: %s", got)
	}
}
