package live

import (
	"fmt"
	"net/http"
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

// CacheCheck always passes: a server whose cache directory is unwritable or
// full serves from memory. When persistence is off or failing it logs why (at
// most once a minute); the metric effectivepolicy_cache_degraded says so too.
func (l *Live) CacheCheck() healthz.HealthChecker {
	var mu sync.Mutex
	var last time.Time
	return healthz.NamedCheck("effectivepolicy-cache", func(*http.Request) error {
		if err := l.CacheError(); err != nil {
			mu.Lock()
			if time.Since(last) > time.Minute {
				last = time.Now()
				klog.InfoS("Output cache degraded; serving from memory", "reason", err.Error())
			}
			mu.Unlock()
		}
		return nil
	})
}

// HealthChecks returns ReadyCheck and CacheCheck.
func (l *Live) HealthChecks() []healthz.HealthChecker {
	return []healthz.HealthChecker{l.ReadyCheck(), l.CacheCheck()}
}
