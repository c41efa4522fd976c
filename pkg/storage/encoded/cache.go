package encoded

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The cache form of an Object (the bbolt value) is
//
//	uvarint(len(header)) header compressed-targets
//
// where header is the JSON of cacheHeader. The compressed targets are the
// Object's own bytes, so writing the cache encodes nothing and restoring it
// decodes nothing but the small header.
type cacheHeader struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Cluster  bool              `json:"cluster,omitempty"`
	Summary  *Summary          `json:"summary,omitempty"`
}

// CacheBytes returns the cache form of o.
func (o *Object) CacheBytes() ([]byte, error) {
	h, err := json.Marshal(cacheHeader{Metadata: o.ObjectMeta, Cluster: o.Cluster, Summary: o.Summary})
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, binary.MaxVarintLen64+len(h)+len(o.targets))
	out = binary.AppendUvarint(out, uint64(len(h)))
	out = append(out, h...)
	return append(out, o.targets...), nil
}

// FromCacheBytes decodes the cache form. The compressed targets are checked
// (zstd's frame checksum) so that a damaged file is detected when it is
// opened, not when a client first asks for the object.
func FromCacheBytes(data []byte) (*Object, error) {
	n, k := binary.Uvarint(data)
	if k <= 0 || n > uint64(len(data)-k) {
		return nil, fmt.Errorf("encoded: cache entry: bad header length")
	}
	var h cacheHeader
	if err := json.Unmarshal(data[k:k+int(n)], &h); err != nil {
		return nil, fmt.Errorf("encoded: cache entry header: %w", err)
	}
	if h.Summary == nil {
		h.Summary = &Summary{}
	}
	o := &Object{ObjectMeta: h.Metadata, Cluster: h.Cluster, Summary: h.Summary}
	if rest := data[k+int(n):]; len(rest) > 0 {
		o.targets = append([]byte(nil), rest...) // data may be bbolt's mmapped page
		if _, err := o.TargetsJSON(); err != nil {
			return nil, err
		}
	}
	return o, nil
}
