package live

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/klog/v2"
)

// ReadyCheck passes once the input informers have synced and the first full
// computation is done. Add it to the server's readyz checks.
func (l *Live) ReadyCheck() healthz.HealthChecker {
	return healthz.NamedCheck("effectivepolicy-computed", func(*http.Request) error {
		if !l.synced.Load() {
			return fmt.Errorf("input informers have not synced yet: %v", l.inputs.Failing())
		}
		if !l.ready.Load() {
			return fmt.Errorf("first computation not done yet")
		}
		return nil
	})
}

// CacheCheckName is the name of CacheCheck: /readyz/effectivepolicy-cache.
const CacheCheckName = "effectivepolicy-cache"

// CacheCheck reports whether the output cache is in use, without ever taking
// the server out of service: a server whose cache directory is unwritable or
// full serves correct answers from memory, and failing /readyz for it would
// make every replica on a full disk unavailable at once.
//
//   - In /readyz (and /readyz?verbose) it passes.
//   - Asked alone, /readyz/effectivepolicy-cache answers 500 with the reason
//     while persistence is off or failing (disabled, unusable directory, failed
//     write), "ok" otherwise. Monitoring and operators probe this path.
//   - While degraded it logs the reason at most once a minute.
//
// The metrics effectivepolicy_cache_degraded and
// effectivepolicy_cache_write_failures_total say the same.
func (l *Live) CacheCheck() healthz.HealthChecker {
	var mu sync.Mutex
	var last time.Time
	return healthz.NamedCheck(CacheCheckName, func(r *http.Request) error {
		err := l.CacheError()
		if err == nil {
			return nil
		}
		mu.Lock()
		if time.Since(last) > time.Minute {
			last = time.Now()
			klog.InfoS("Output cache degraded; serving from memory", "reason", err.Error())
		}
		mu.Unlock()
		if r != nil && r.URL != nil && strings.HasSuffix(r.URL.Path, "/"+CacheCheckName) {
			return err
		}
		return nil
	})
}

// HealthChecks returns ReadyCheck and CacheCheck.
func (l *Live) HealthChecks() []healthz.HealthChecker {
	return []healthz.HealthChecker{l.ReadyCheck(), l.CacheCheck()}
}
