package encoded

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"

	"github.com/klauspost/compress/s2"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CacheFormat is the version of the cache form below, written into the
// cache file's header (pkg/storage/cache): a file of another version is
// rebuilt, never misread. Bump it on every change of the bytes CacheBytes
// writes for the same Object; TestCacheFormatGolden fails until then. It
// also versions the file's layout (pkg/storage/cache). History: 2: header
// epoch, epoch-encoded resourceVersions; 3: values in this cache form (zstd
// targets); 4: S2 targets with a CRC; 5: the header names the kind (the
// reach kinds share the form), and the file has the reach buckets; 6: a
// policy kind's semantics in the targets and policies, the assumed kinds in
// the summary (a file of 5 holds outputs without them).
const CacheFormat = "6"

// The cache form of an Object (the bbolt value) is
//
//	uvarint(len(header)) header crc32c(compressed-targets) compressed-targets
//
// where header is the JSON of cacheHeader and the CRC (Castagnoli, 4 bytes,
// big-endian) is present when there are targets. The compressed targets are
// the Object's own bytes, so writing the cache encodes nothing and restoring
// it decodes nothing but the small header; the CRC (S2 blocks carry none)
// detects a damaged file when it is opened, not when a client first asks
// for the object.
type cacheHeader struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Kind     string            `json:"kind"`
	Summary  *Summary          `json:"summary,omitempty"`
}

// CacheBytes returns the cache form of o.
func (o *Object) CacheBytes() ([]byte, error) {
	h, err := json.Marshal(cacheHeader{Metadata: o.ObjectMeta, Kind: o.Kind.String(), Summary: o.Summary})
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, binary.MaxVarintLen64+len(h)+4+len(o.targets))
	out = binary.AppendUvarint(out, uint64(len(h)))
	out = append(out, h...)
	if o.targets == nil {
		return out, nil
	}
	out = binary.BigEndian.AppendUint32(out, crc32.Checksum(o.targets, castagnoli))
	return append(out, o.targets...), nil
}

// FromCacheBytes decodes the cache form, checking the targets' CRC and
// their decoded length.
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
	kind, ok := kindNamed(h.Kind)
	if !ok {
		return nil, fmt.Errorf("encoded: cache entry: unknown kind %q", h.Kind)
	}
	o := &Object{ObjectMeta: h.Metadata, Kind: kind, Summary: h.Summary}
	if rest := data[k+int(n):]; len(rest) > 0 {
		if len(rest) < 5 {
			return nil, fmt.Errorf("encoded: cache entry: truncated targets")
		}
		sum, targets := binary.BigEndian.Uint32(rest), rest[4:]
		if crc32.Checksum(targets, castagnoli) != sum {
			return nil, fmt.Errorf("encoded: cache entry: targets checksum mismatch")
		}
		if n, err := s2.DecodedLen(targets); err != nil || n > maxTargetsJSON {
			return nil, fmt.Errorf("encoded: cache entry: bad targets length (%d, %v)", n, err)
		}
		o.targets = append([]byte(nil), targets...) // data may be bbolt's mmapped page
	}
	return o, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)
