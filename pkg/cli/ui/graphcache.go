package ui

import (
	"encoding/json"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// graphCacheMax bounds the graphs kept for one version of the items (one
// per Gateway the pages asked for; the query is the page's, so it is
// bounded rather than trusted).
const graphCacheMax = 32

// graphCache keeps the encoded graphs drawn from one version of the items,
// by focus. The page's /api/graph and its Live stream's first graph are the
// same graph, and after a change every stream of a Gateway draws the same
// one: at scale 1 each draw walks the 40,000 EffectivePolicies (about a
// second of a busy core), so it is drawn once per version and focus. A draw
// under way is waited for, not started again.
type graphCache struct {
	mu      sync.Mutex
	version uint64
	graphs  map[string]*cachedGraph
}

// cachedGraph is one graph's encoding and tag, or why it could not be
// drawn; done closes when it is set.
type cachedGraph struct {
	done chan struct{}
	body []byte
	tag  string
	err  error
}

// get answers the graph of objs (of version) focused on focus, drawn by
// graphFor, from the cache when it is there.
func (c *graphCache) get(objs []runtime.Object, version uint64, focus string) (*cachedGraph, error) {
	c.mu.Lock()
	if c.graphs == nil || c.version != version || len(c.graphs) >= graphCacheMax {
		c.version, c.graphs = version, map[string]*cachedGraph{}
	}
	g, ok := c.graphs[focus]
	if !ok {
		g = &cachedGraph{done: make(chan struct{})}
		c.graphs[focus] = g
	}
	c.mu.Unlock()
	if ok {
		<-g.done
		return g, g.err
	}
	defer close(g.done)
	drawn, err := graphFor(objs, focus)
	if err == nil {
		g.body, err = json.Marshal(drawn)
	}
	if err != nil {
		g.err = err
		return g, err
	}
	g.tag = graphTag(g.body)
	return g, nil
}
