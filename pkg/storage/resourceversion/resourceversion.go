// Package resourceversion is the one definition of the server's
// resourceVersions: a number
//
//	resourceVersion = epoch<<CounterBits | counter      (decimal in the API)
//
// where the epoch (1..MaxEpoch) names one history of the stores and the
// counter grows by one per applied change. Replicas, and a server whose cache
// was rebuilt, number their histories independently; the epoch tells their
// resourceVersions apart, so that a client switching replica relists instead
// of resuming from an unrelated state.
//
// The versioned stores hand resourceVersions out and the bbolt cache
// persists them and the epoch of its file; both use this package, so the
// layout cannot drift between them.
package resourceversion

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
)

// CounterBits is the number of low bits of a resourceVersion that count the
// changes of one epoch; the bits above hold the epoch.
const CounterBits = 40

// MaxEpoch is the largest epoch: epochs have 23 bits, so a resourceVersion
// is below 2^63 and prints as a plain decimal in every client (some parse it
// as a signed 64-bit number).
const MaxEpoch = 1<<23 - 1

// MaxCounter is the largest counter of an epoch.
const MaxCounter = 1<<CounterBits - 1

// NewEpoch returns a random epoch in [1, MaxEpoch]. Two histories pick the
// same epoch with a probability of about 1 in 8 million.
func NewEpoch() uint32 {
	for {
		var b [4]byte
		// crypto/rand.Read does not return an error (it crashes the program
		// when the system cannot provide randomness).
		_, _ = rand.Read(b[:])
		if e := binary.BigEndian.Uint32(b[:]) & MaxEpoch; e != 0 {
			return e
		}
	}
}

// ValidEpoch reports whether e is an epoch: in [1, MaxEpoch].
func ValidEpoch(e uint64) bool { return e != 0 && e <= MaxEpoch }

// Make returns the resourceVersion of counter in epoch. The counter is
// truncated to CounterBits and the epoch to MaxEpoch.
func Make(epoch uint32, counter uint64) uint64 {
	return uint64(epoch&MaxEpoch)<<CounterBits | counter&MaxCounter
}

// EpochOf returns the epoch a resourceVersion belongs to.
func EpochOf(rv uint64) uint32 { return uint32(rv >> CounterBits) }

// CounterOf returns the counter of a resourceVersion within its epoch.
func CounterOf(rv uint64) uint64 { return rv & MaxCounter }

// Format returns rv as the API writes it (decimal).
func Format(rv uint64) string { return strconv.FormatUint(rv, 10) }

// Parse parses a resourceVersion as the API writes it (decimal); on error
// it returns 0.
func Parse(s string) (uint64, error) {
	rv, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, err
	}
	return rv, nil
}

// FormatEpoch returns an epoch as the cache file's header holds it (decimal).
func FormatEpoch(e uint32) string { return strconv.FormatUint(uint64(e), 10) }

// ParseEpoch parses an epoch as FormatEpoch writes it; anything that is not
// a decimal in [1, MaxEpoch] is an error.
func ParseEpoch(s string) (uint32, error) {
	e, err := strconv.ParseUint(s, 10, 32)
	if err != nil || !ValidEpoch(e) {
		return 0, fmt.Errorf("invalid epoch %q", s)
	}
	return uint32(e), nil
}
