//go:build e2e && long

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	versioned "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
)

// TestLongReplicaSIGKILL runs two replicas behind the APIService and kills one with SIGKILL while
// clients keep sending GETs and LISTs through the aggregator.
//
// What stands in for the Endpoints update: the local kube-apiserver resolves the Service to the
// ports in .local/ep-ports (re-read per request, round-robin, skipping ports that refuse
// connections). A real cluster takes a dead pod out of the Service's endpoints once the endpoints
// controller sees it not ready; here the test does the same by removing the dead replica's port
// (hack/local-up.sh stop-replica) one second after the kill. Between the kill and that removal
// a client may see failures (requests in flight on the killed replica, or proxied to it just
// before the kill): those are retried, as a client retries a 503. The test proves that:
//   - both replicas served requests before the kill (the killed one was really in rotation);
//   - every request eventually succeeds, with retries only for attempts that started before the
//     endpoint removal;
//   - not one attempt that started after the removal fails;
//   - every answer is correct (the expected EffectivePolicies, before and after the kill).
func TestLongReplicaSIGKILL(t *testing.T) {
	const ns, n, color = "e2e-fault-replicas", 3, "magenta"
	faultFixture(t, ns, n, color)
	waitColors(t, ns, n, color)
	localUp(t, "start-replica", "1")
	t.Cleanup(func() {
		localUp(t, "stop-replica", "1")
		if !serverRunning(t) {
			restoreServer(t)
		}
	})
	replicaPort := serverPort(t, 1)

	clients := &replicaClients{cs: clientset(t, ""), ns: ns, n: n, color: color, stop: make(chan struct{})}
	clients.start()
	finished := false
	defer func() {
		if !finished {
			clients.stopAll()
		}
	}()

	// Both replicas in rotation: the replica about to be killed has served our resource.
	eventually(t, 30*time.Second, "replica 1 to serve requests", func() error {
		if v := requestsServed(t, replicaPort); v < 5 {
			return fmt.Errorf("replica 1 served %v effectivepolicies requests", v)
		}
		return nil
	})
	clients.mu.Lock()
	nBefore := len(clients.attempts)
	clients.mu.Unlock()
	killAt := time.Now()
	localUp(t, "kill-replica", "1")
	time.Sleep(time.Second) // the endpoints controller's reaction time, roughly
	localUp(t, "stop-replica", "1")
	clients.mu.Lock()
	clients.removedAt = time.Now()
	clients.mu.Unlock()
	// Keep the clients going until a good number of requests has been made after the removal.
	eventually(t, 120*time.Second, "200 attempts after the endpoint removal", clients.enoughAfterRemoval)
	clients.stopAll()
	finished = true

	checkReplicaAttempts(t, clients, killAt, nBefore)
	if !serverRunning(t) {
		t.Fatal("the surviving replica is not running")
	}
}

// replicaAttempt is one try of a request: when it started and how it ended.
type replicaAttempt struct {
	start time.Time
	err   error
}

// replicaClients are two clients sending GETs and LISTs of the n
// EffectivePolicies of ns (all of color) through the aggregator until stop
// closes; a request is retried while its failures started before removedAt.
type replicaClients struct {
	cs       *versioned.Clientset
	ns       string
	n        int
	color    string
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	attempts []replicaAttempt
	// removedAt is zero until the dead port is removed.
	removedAt time.Time
	// lost are the logical requests that never succeeded.
	lost []string
}

func (r *replicaClients) start() {
	for c := 0; c < 2; c++ {
		r.wg.Add(1)
		go func(c int) {
			defer r.wg.Done()
			r.run(c)
		}(c)
	}
}

func (r *replicaClients) stopAll() {
	close(r.stop)
	r.wg.Wait()
}

// run is client c: GETs and LISTs in turn, each tried until it succeeds (at
// most 50 times), a failure after the removal not retried.
func (r *replicaClients) run(c int) {
	for i := 0; ; i++ {
		select {
		case <-r.stop:
			return
		default:
		}
		get := (i+c)%2 == 0
		ok := false
		for try := 0; try < 50 && !ok; try++ {
			a := replicaAttempt{start: time.Now()}
			a.err = r.one(get)
			r.mu.Lock()
			r.attempts = append(r.attempts, a)
			retryAllowed := r.removedAt.IsZero() || a.start.Before(r.removedAt)
			r.mu.Unlock()
			ok = a.err == nil
			if !ok && !retryAllowed {
				break // failures after the removal are not retried: they count
			}
			if !ok {
				time.Sleep(100 * time.Millisecond)
			}
		}
		if !ok {
			r.mu.Lock()
			r.lost = append(r.lost, fmt.Sprintf("get=%v", get))
			r.mu.Unlock()
		}
	}
}

// one request: a GET of svc-0 or a LIST of the namespace, checked against the expectation.
func (r *replicaClients) one(get bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if get {
		ep, err := r.cs.EffectivepolicyV1alpha1().EffectivePolicies(r.ns).Get(ctx, "svc-0", metav1.GetOptions{})
		if err != nil {
			return err
		}
		return checkColorItemsOne(ep, r.color)
	}
	l, err := r.cs.EffectivepolicyV1alpha1().EffectivePolicies(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	return checkColorItems(l.Items, r.n, r.color)
}

// enoughAfterRemoval: 200 attempts have started since the removal.
func (r *replicaClients) enoughAfterRemoval() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := 0
	for _, a := range r.attempts {
		if !a.start.Before(r.removedAt) {
			k++
		}
	}
	if k < 200 {
		return fmt.Errorf("%d so far", k)
	}
	return nil
}

// checkReplicaAttempts logs the stopped clients' attempts and their failures
// (nBefore of them before the kill at killAt) and fails if an attempt after
// the removal failed or a request never succeeded.
func checkReplicaAttempts(t *testing.T, r *replicaClients, killAt time.Time, nBefore int) {
	t.Helper()
	attempts, removedAt, lost := r.attempts, r.removedAt, r.lost
	var windowFailures, afterFailures, after int
	var failures []string
	for _, a := range attempts {
		switch {
		case a.start.Before(removedAt) && a.err != nil:
			windowFailures++
			failures = append(failures, fmt.Sprintf("+%s %v", a.start.Sub(killAt).Round(time.Millisecond), a.err))
		case !a.start.Before(removedAt):
			after++
			if a.err != nil {
				afterFailures++
				failures = append(failures, fmt.Sprintf("after removal +%s %v", a.start.Sub(removedAt).Round(time.Millisecond), a.err))
			}
		}
	}
	t.Logf("attempts: %d before the kill, %d in total; %d failed between the kill and the endpoint removal (retried), %d of %d failed after it",
		nBefore, len(attempts), windowFailures, afterFailures, after)
	for _, f := range failures {
		t.Logf("failed attempt: %s", f)
	}
	if afterFailures > 0 {
		t.Fatalf("%d requests failed after the dead replica's endpoint was removed", afterFailures)
	}
	if len(lost) > 0 {
		t.Fatalf("%d requests never succeeded: %v", len(lost), lost)
	}
}

// checkColorItemsOne checks a single fixture EffectivePolicy.
func checkColorItemsOne(ep *v1alpha1.EffectivePolicy, color string) error {
	if ep.Name != "svc-0" {
		return fmt.Errorf("got %s, want svc-0", ep.Name)
	}
	if len(ep.Targets) != 1 || len(ep.Targets[0].Policies) != 1 || len(ep.Targets[0].Policies[0].Effective) != 1 {
		return fmt.Errorf("unexpected targets %+v", ep.Targets)
	}
	if got, want := string(ep.Targets[0].Policies[0].Effective[0].Spec.Raw), fmt.Sprintf(`{"color":%q}`, color); got != want {
		return fmt.Errorf("effective spec %s, want %s", got, want)
	}
	return nil
}

var effectivePolicyRequestsRE = regexp.MustCompile(`(?m)^apiserver_request_total\{[^}]*resource="effectivepolicies"[^}]*\} ([0-9.eE+]+)$`)

// requestsServed sums apiserver_request_total for effectivepolicies on a replica's port.
func requestsServed(t *testing.T, port string) float64 {
	t.Helper()
	code, body, err := serverHTTP(t, port, "/metrics")
	if err != nil || code != 200 {
		return 0
	}
	sum := 0.0
	for _, m := range effectivePolicyRequestsRE.FindAllStringSubmatch(body, -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		sum += v
	}
	return sum
}
