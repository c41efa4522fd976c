package resourceversion

import (
	"math"
	"testing"
)

func TestMake(t *testing.T) {
	for _, tc := range []struct {
		name    string
		epoch   uint32
		counter uint64
		want    uint64
	}{
		{"zero", 0, 0, 0},
		{"counter only", 0, 7, 7},
		{"epoch 1, counter 0", 1, 0, 1 << 40},
		{"epoch 1, counter 5", 1, 5, 1<<40 | 5},
		{"largest counter", 3, MaxCounter, 3<<40 | (1<<40 - 1)},
		{"counter overflow is truncated", 3, MaxCounter + 2, 3<<40 | 1},
		{"largest epoch", MaxEpoch, 1, uint64(MaxEpoch)<<40 | 1},
		{"epoch beyond 23 bits is truncated", MaxEpoch + 2, 1, 1<<40 | 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Make(tc.epoch, tc.counter)
			if got != tc.want {
				t.Fatalf("Make(%d, %d) = %d, want %d", tc.epoch, tc.counter, got, tc.want)
			}
			if got > math.MaxInt64 {
				t.Errorf("%d does not fit a signed 64-bit number", got)
			}
			if EpochOf(got) != tc.epoch&MaxEpoch || CounterOf(got) != tc.counter&MaxCounter {
				t.Errorf("EpochOf, CounterOf(%d) = %d, %d", got, EpochOf(got), CounterOf(got))
			}
		})
	}
}

func TestEpochOf(t *testing.T) {
	for _, tc := range []struct {
		rv      uint64
		epoch   uint32
		counter uint64
	}{
		{0, 0, 0},
		{1<<40 - 1, 0, 1<<40 - 1},
		{1 << 40, 1, 0},
		{42<<40 | 9, 42, 9},
		{math.MaxInt64, MaxEpoch, MaxCounter},
	} {
		if e, c := EpochOf(tc.rv), CounterOf(tc.rv); e != tc.epoch || c != tc.counter {
			t.Errorf("%d: epoch %d counter %d, want %d %d", tc.rv, e, c, tc.epoch, tc.counter)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		err  bool
	}{
		{"0", 0, false},
		{"1099511627776", 1 << 40, false},
		{"9223372036854775807", math.MaxInt64, false},
		{"18446744073709551615", math.MaxUint64, false},
		{"", 0, true},
		{"-1", 0, true},
		{"1e3", 0, true},
		{" 1", 0, true},
		{"18446744073709551616", 0, true},
	} {
		got, err := Parse(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("Parse(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.err)
		}
		if err == nil && Format(got) != tc.in {
			t.Errorf("Format(%d) = %q, want %q", got, Format(got), tc.in)
		}
	}
}

func TestParseEpoch(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint32
		err  bool
	}{
		{"1", 1, false},
		{"8388607", MaxEpoch, false},
		{"0", 0, true},
		{"8388608", 0, true},
		{"4294967296", 0, true},
		{"", 0, true},
		{"x", 0, true},
		{"-3", 0, true},
	} {
		got, err := ParseEpoch(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseEpoch(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.err)
		}
		if err == nil && FormatEpoch(got) != tc.in {
			t.Errorf("FormatEpoch(%d) = %q", got, FormatEpoch(got))
		}
	}
}

func TestValidEpoch(t *testing.T) {
	for e, want := range map[uint64]bool{0: false, 1: true, MaxEpoch: true, MaxEpoch + 1: false, math.MaxUint64: false} {
		if ValidEpoch(e) != want {
			t.Errorf("ValidEpoch(%d) = %v", e, !want)
		}
	}
}

func TestNewEpoch(t *testing.T) {
	seen := map[uint32]bool{}
	for range 1000 {
		e := NewEpoch()
		if !ValidEpoch(uint64(e)) {
			t.Fatalf("NewEpoch() = %d", e)
		}
		seen[e] = true
	}
	if len(seen) < 990 { // a collision per 8 million pairs: a handful at most
		t.Errorf("%d distinct epochs of 1000", len(seen))
	}
}
