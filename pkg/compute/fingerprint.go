package compute

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
)

// fingerprint identifies the content of a topology object the engine looks
// at (spec and labels), so that an Upsert that changes neither is a no-op.
// It is a SHA-256 of a canonical encoding rather than a private deep copy:
// the engine then retains nothing of the object but what it parsed.
type fingerprint [sha256.Size]byte

// fingerprintOf encodes into buf (reused between calls; mutations hold the
// engine's write lock) and returns the hash and the buffer.
func fingerprintOf(buf []byte, spec map[string]interface{}, lbls map[string]string) (fingerprint, []byte) {
	b := buf[:0]
	if spec == nil {
		b = append(b, 'n')
	} else {
		b = fpValue(b, spec)
	}
	keys := make([]string, 0, len(lbls))
	for k := range lbls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = fpUint(append(b, 'L'), uint64(len(keys)))
	for _, k := range keys {
		b = fpStr(fpStr(b, k), lbls[k])
	}
	return sha256.Sum256(b), b
}

// The encoding is self-delimiting: every value starts with a type tag,
// strings and containers with their length.
func fpUint(b []byte, u uint64) []byte { return binary.LittleEndian.AppendUint64(b, u) }

func fpStr(b []byte, s string) []byte { return append(fpUint(append(b, 's'), uint64(len(s))), s...) }

func fpValue(b []byte, v interface{}) []byte {
	switch t := v.(type) {
	case nil:
		return append(b, 'n')
	case string:
		return fpStr(b, t)
	case bool:
		if t {
			return append(b, 'T')
		}
		return append(b, 'F')
	case int64:
		return fpUint(append(b, 'i'), uint64(t))
	case float64:
		return fpUint(append(b, 'f'), math.Float64bits(t))
	case map[string]interface{}:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = fpUint(append(b, 'm'), uint64(len(keys)))
		for _, k := range keys {
			b = fpValue(fpStr(b, k), t[k])
		}
		return b
	case []interface{}:
		b = fpUint(append(b, 'l'), uint64(len(t)))
		for _, it := range t {
			b = fpValue(b, it)
		}
		return b
	default: // other numeric types in hand-built objects
		return fpStr(append(b, '?'), fmt.Sprintf("%T:%#v", t, t))
	}
}
