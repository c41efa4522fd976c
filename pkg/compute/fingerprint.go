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
// the engine keeps the spec's encoding (storedspec.go), not its decoded
// tree.
type fingerprint [sha256.Size]byte

// fingerprintOf hashes a spec's canonical encoding (encodeSpec) with the
// labels and the kept annotations, in buf (reused between calls; mutations hold the engine's write
// lock), and returns the hash and the buffer.
func fingerprintOf(buf, spec []byte, lbls, ann map[string]string) (fingerprint, []byte) {
	b := fpMap(append(append(buf[:0], spec...), 'L'), lbls)
	if len(ann) > 0 {
		b = fpMap(append(b, 'A'), ann)
	}
	return sha256.Sum256(b), b
}

// fpMap appends the canonical encoding of a string map to b.
func fpMap(b []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = fpUint(b, uint64(len(keys)))
	for _, k := range keys {
		b = fpStr(fpStr(b, k), m[k])
	}
	return b
}

// specEncoder writes the canonical encoding of a decoded JSON value. The
// encoding is self-delimiting: every value starts with a type tag, strings
// and containers with their length; map keys are sorted. exact is false
// once a value JSON cannot hold was met (hand-built objects with int or
// other Go types): such an encoding identifies the value but cannot be
// decoded.
type specEncoder struct {
	b     []byte
	exact bool
}

// encodeSpec encodes spec (nil: no spec) into buf.
func encodeSpec(buf []byte, spec map[string]interface{}) (b []byte, exact bool) {
	e := specEncoder{b: buf[:0], exact: true}
	if spec == nil {
		e.b = append(e.b, 'n')
	} else {
		e.value(spec)
	}
	return e.b, e.exact
}

func fpUint(b []byte, u uint64) []byte { return binary.AppendUvarint(b, u) }

func fpStr(b []byte, s string) []byte { return append(fpUint(append(b, 's'), uint64(len(s))), s...) }

func (e *specEncoder) value(v interface{}) {
	switch t := v.(type) {
	case nil:
		e.b = append(e.b, 'n')
	case string:
		e.b = fpStr(e.b, t)
	case bool:
		if t {
			e.b = append(e.b, 'T')
		} else {
			e.b = append(e.b, 'F')
		}
	case int64:
		e.b = binary.AppendVarint(append(e.b, 'i'), t)
	case float64:
		e.b = binary.LittleEndian.AppendUint64(append(e.b, 'f'), math.Float64bits(t))
	case map[string]interface{}:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		e.b = fpUint(append(e.b, 'm'), uint64(len(keys)))
		for _, k := range keys {
			e.b = fpStr(e.b, k)
			e.value(t[k])
		}
	case []interface{}:
		e.b = fpUint(append(e.b, 'l'), uint64(len(t)))
		for _, it := range t {
			e.value(it)
		}
	default: // other numeric types in hand-built objects
		e.exact = false
		e.b = fpStr(append(e.b, '?'), fmt.Sprintf("%T:%#v", t, t))
	}
}
