package encoded

import (
	"context"
	"encoding/json"
	"io"
	goruntime "runtime"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// List is a list of Objects of one Kind (EffectivePolicyList, ...).
type List struct {
	metav1.ListMeta
	// Kind is the kind of the items.
	Kind  Kind
	Items []*Object
}

var _ runtime.CacheableObject = &List{}

func listKindOf(k Kind) string { return k.String() + "List" }

// GetObjectKind implements runtime.Object (a fresh TypeMeta, as for Object).
func (l *List) GetObjectKind() schema.ObjectKind {
	return &metav1.TypeMeta{Kind: listKindOf(l.Kind), APIVersion: v1alpha1.SchemeGroupVersion.String()}
}

// DeepCopyObject implements runtime.Object; the items are shared (immutable
// for everything but their metadata, which nothing on the serving path sets).
func (l *List) DeepCopyObject() runtime.Object {
	c := *l
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	c.Items = append([]*Object(nil), l.Items...)
	return &c
}

// GetObject implements runtime.CacheableObject: the typed list with every
// item decoded (on GOMAXPROCS goroutines: a table of every EffectivePolicy
// of a large cluster decodes tens of thousands).
func (l *List) GetObject() runtime.Object {
	decoded := make([]runtime.Object, len(l.Items))
	workqueue.ParallelizeUntil(context.Background(), goruntime.GOMAXPROCS(0), len(l.Items), func(i int) { decoded[i] = l.Items[i].GetObject() })
	tm := metav1.TypeMeta{Kind: listKindOf(l.Kind), APIVersion: v1alpha1.SchemeGroupVersion.String()}
	lm := *l.ListMeta.DeepCopy()
	switch l.Kind {
	case KindClusterEffectivePolicy:
		return &v1alpha1.ClusterEffectivePolicyList{TypeMeta: tm, ListMeta: lm, Items: items[v1alpha1.ClusterEffectivePolicy](decoded)}
	case KindPolicyReach:
		return &v1alpha1.PolicyReachList{TypeMeta: tm, ListMeta: lm, Items: items[v1alpha1.PolicyReach](decoded)}
	case KindClusterPolicyReach:
		return &v1alpha1.ClusterPolicyReachList{TypeMeta: tm, ListMeta: lm, Items: items[v1alpha1.ClusterPolicyReach](decoded)}
	}
	return &v1alpha1.EffectivePolicyList{TypeMeta: tm, ListMeta: lm, Items: items[v1alpha1.EffectivePolicy](decoded)}
}

// items dereferences decoded list items of type *T, without their TypeMeta
// (the items of a typed list carry none).
func items[T any, PT interface {
	*T
	runtime.Object
}](decoded []runtime.Object) []T {
	out := make([]T, len(decoded))
	for i, o := range decoded {
		out[i] = *o.(PT)
		PT(&out[i]).GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
	return out
}

// gzipThreshold is the size of the first write from which the API server
// gzips a response (responsewriters.defaultGzipThresholdBytes): it decides
// on the first write alone, so that write must be at least this large.
const gzipThreshold = 128 * 1024

// chunkItems is how many items are prepared at once for writing.
const chunkItems = 256

// listChunk is a run of items' JSON, or the error that stopped producing them.
type listChunk struct {
	data []byte
	err  error
}

// jsonHead is the list's JSON up to the first item.
func (l *List) jsonHead() ([]byte, error) {
	meta, err := json.Marshal(&l.ListMeta)
	if err != nil {
		return nil, err
	}
	head := make([]byte, 0, 256)
	head = append(head, `{"kind":"`...)
	head = append(head, listKindOf(l.Kind)...)
	head = append(head, `","apiVersion":"`...)
	head = append(head, v1alpha1.SchemeGroupVersion.String()...)
	head = append(head, `","metadata":`...)
	head = append(head, meta...)
	return append(head, `,"items":[`...), nil
}

// produceChunks writes the items' JSON, chunkItems at a time, into chunks on another
// goroutine until done is closed. Three buffers circulate: one being filled, one being
// written, one spare; the consumer hands a written buffer back through free (an io.Writer
// keeps nothing of what it is given).
func (l *List) produceChunks(done <-chan struct{}) (<-chan listChunk, chan<- []byte) {
	chunks := make(chan listChunk, 1)
	free := make(chan []byte, 3)
	for range 3 {
		free <- nil
	}
	go func() {
		defer close(chunks)
		for start := 0; start < len(l.Items); start += chunkItems {
			end := min(start+chunkItems, len(l.Items))
			var buf []byte
			select {
			case buf = <-free:
			case <-done:
				return
			}
			if buf == nil {
				buf = make([]byte, 0, 4<<20) // ~chunkItems outputs of 13 KB
			}
			buf = buf[:0]
			var err error
			for i := start; i < end && err == nil; i++ {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf, err = l.Items[i].appendJSON(buf, false)
			}
			select {
			case chunks <- listChunk{buf, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return chunks, free
}

// CacheEncode implements runtime.CacheableObject (see the package comment).
// The plain JSON is written in chunks, the next chunk decompressed on another
// goroutine while the current one is written (and, by the API server,
// gzipped).
func (l *List) CacheEncode(id runtime.Identifier, encode func(runtime.Object, io.Writer) error, w io.Writer) error {
	kind := classify(id).kind
	if kind != plainJSON && kind != prettyJSON {
		return encode(l.GetObject(), w)
	}
	// Pretty JSON is the plain JSON re-indented on the way out (indent.go).
	var ind *indenter
	var pretty []byte
	out := func(b []byte) []byte {
		if ind == nil {
			return b
		}
		pretty = ind.write(pretty[:0], b)
		return pretty
	}
	if kind == prettyJSON {
		ind = &indenter{}
	}
	head, err := l.jsonHead()
	if err != nil {
		return err
	}
	done := make(chan struct{})
	defer close(done)
	chunks, free := l.produceChunks(done)

	end := "]}\n" // json.Encoder ends a value with a newline
	if ind != nil {
		end = "]}" // json.MarshalIndent does not
	}
	pending := append(make([]byte, 0, gzipThreshold+64*1024), out(head)...) // until the first write
	for c := range chunks {
		if c.err != nil {
			return c.err
		}
		data := out(c.data)
		if pending != nil {
			pending = append(pending, data...)
			if len(pending) > gzipThreshold {
				if _, err := w.Write(pending); err != nil {
					return err
				}
				pending = nil
			}
		} else if _, err := w.Write(data); err != nil {
			return err
		}
		free <- c.data
	}
	_, err = w.Write(append(pending, out([]byte(end))...))
	return err
}
