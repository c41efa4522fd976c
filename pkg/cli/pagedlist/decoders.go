package pagedlist

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
)

// decoders decode pages on their own goroutines, at most limit at a time,
// keeping the pages in the order they were given.
type decoders struct {
	newList func() kruntime.Object
	slots   chan struct{}
	pages   []*decoded
}

// decoded is one page being decoded: done closes when obj or err is set.
type decoded struct {
	done chan struct{}
	obj  kruntime.Object
	err  error
}

func newDecoders(newList func() kruntime.Object, limit int) *decoders {
	if limit < 1 {
		limit = 1
	}
	return &decoders{newList: newList, slots: make(chan struct{}, limit)}
}

// decode starts decoding body, waiting first for a free slot, so that at
// most limit bodies wait in memory beside the one being fetched.
func (d *decoders) decode(body []byte) *decoded {
	p := &decoded{done: make(chan struct{}), obj: d.newList()}
	d.pages = append(d.pages, p)
	d.slots <- struct{}{}
	go func() {
		defer func() { <-d.slots; close(p.done) }()
		p.err = decodeInto(body, p.obj)
	}()
	return p
}

// listMetaOf waits for the page and returns its list metadata.
func (d *decoders) listMetaOf(p *decoded) (*metav1.ListMeta, error) {
	<-p.done
	if p.err != nil {
		return nil, p.err
	}
	lm, err := meta.ListAccessor(p.obj)
	if err != nil {
		return nil, err
	}
	return &metav1.ListMeta{ResourceVersion: lm.GetResourceVersion(), Continue: lm.GetContinue(),
		RemainingItemCount: lm.GetRemainingItemCount()}, nil
}

// wait waits for every page and returns them in order, or the first
// page's error.
func (d *decoders) wait() ([]kruntime.Object, error) {
	out := make([]kruntime.Object, 0, len(d.pages))
	var first error
	for i, p := range d.pages {
		<-p.done
		if p.err != nil && first == nil {
			first = fmt.Errorf("page %d: %w", i+1, p.err)
		}
		out = append(out, p.obj)
	}
	return out, first
}

// abandon waits for the decodes under way, so that none outlives the
// list, and drops them: the list failed.
func (d *decoders) abandon() { _, _ = d.wait() }
