package compute

import (
	"encoding/binary"
	"errors"
	"math"
)

// storedSpec is a topology object's spec as the engine keeps it: the bytes
// of its canonical encoding (fingerprint.go) rather than the informer's
// decoded tree, which is several times larger (every map, list and scalar
// of it a separate allocation) and would stay alive for every HTTPRoute
// and Service of the cluster. The spec is decoded again only where it is
// read whole: a request trace's candidate routes and a review putting an
// object back. The bytes are never modified once stored, so a decoder
// needs no lock.
type storedSpec struct {
	enc []byte
	// ref holds the spec itself when its encoding cannot be decoded (a
	// hand-built object with a Go value JSON cannot hold).
	ref map[string]interface{}
}

// keepSpec returns spec's stored form, encoding it in scratch, and the
// scratch buffer for the next call.
func keepSpec(scratch []byte, spec map[string]interface{}) (storedSpec, []byte) {
	b, exact := encodeSpec(scratch, spec)
	s := storedSpec{enc: append([]byte(nil), b...)}
	if !exact {
		s.ref = spec
	}
	return s, b
}

// errSpecEncoding means stored bytes are not a canonical encoding: an
// engine bug, never an input's fault.
var errSpecEncoding = errors.New("compute: a stored spec does not decode")

// decode returns the spec (nil: the object had none) for the caller to
// read, not modify: decoded, a fresh tree; a hand-built one, its own.
func (s storedSpec) decode() (map[string]interface{}, error) {
	if s.ref != nil {
		return s.ref, nil
	}
	d := specDecoder{b: s.enc}
	v := d.value()
	if d.err == nil && len(d.b) != 0 {
		d.err = errSpecEncoding
	}
	if d.err != nil {
		return nil, d.err
	}
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]interface{})
	if !ok {
		return nil, errSpecEncoding
	}
	return m, nil
}

// specDecoder reads what specEncoder wrote: strings, bools, int64s,
// float64s, nils, maps and lists, as JSON decoding gives them.
type specDecoder struct {
	b   []byte
	err error
}

func (d *specDecoder) value() interface{} {
	if d.err != nil || len(d.b) == 0 {
		d.err = errSpecEncoding
		return nil
	}
	tag := d.b[0]
	d.b = d.b[1:]
	switch tag {
	case 'n':
		return nil
	case 'T':
		return true
	case 'F':
		return false
	case 's':
		return d.str()
	case 'i':
		v, n := binary.Varint(d.b)
		if n <= 0 {
			d.err = errSpecEncoding
			return nil
		}
		d.b = d.b[n:]
		return v
	case 'f':
		if len(d.b) < 8 {
			d.err = errSpecEncoding
			return nil
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
		d.b = d.b[8:]
		return v
	case 'm':
		n := d.count()
		m := make(map[string]interface{}, min(n, maxPrealloc))
		for i := 0; i < n && d.err == nil; i++ {
			if len(d.b) == 0 || d.b[0] != 's' {
				d.err = errSpecEncoding
				break
			}
			d.b = d.b[1:]
			k := d.str()
			m[k] = d.value()
		}
		return m
	case 'l':
		n := d.count()
		l := make([]interface{}, 0, min(n, maxPrealloc))
		for i := 0; i < n && d.err == nil; i++ {
			l = append(l, d.value())
		}
		return l
	default:
		d.err = errSpecEncoding
		return nil
	}
}

// maxPrealloc bounds the room made for a container before its elements are
// read: bad bytes declaring a large count at every level of a deep nesting
// would otherwise allocate quadratically in their length. Specs' maps and
// lists are small.
const maxPrealloc = 16

// count reads a length, bounded by the bytes left (every element takes at
// least one).
func (d *specDecoder) count() int {
	u, n := binary.Uvarint(d.b)
	if n <= 0 || u > uint64(len(d.b)-n) {
		d.err = errSpecEncoding
		return 0
	}
	d.b = d.b[n:]
	return int(u)
}

func (d *specDecoder) str() string {
	n := d.count()
	if d.err != nil || n > len(d.b) {
		d.err = errSpecEncoding
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
