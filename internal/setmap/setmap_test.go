package setmap

import (
	"reflect"
	"testing"
)

func TestAddRemove(t *testing.T) {
	type op struct {
		add  bool
		k, v string
	}
	cases := []struct {
		name string
		ops  []op
		want map[string]map[string]bool
	}{
		{"add makes the set", []op{{true, "a", "x"}}, map[string]map[string]bool{"a": {"x": true}}},
		{"add twice keeps one", []op{{true, "a", "x"}, {true, "a", "x"}}, map[string]map[string]bool{"a": {"x": true}}},
		{"remove one of two", []op{{true, "a", "x"}, {true, "a", "y"}, {false, "a", "x"}}, map[string]map[string]bool{"a": {"y": true}}},
		{"remove the last drops the key", []op{{true, "a", "x"}, {true, "b", "x"}, {false, "a", "x"}}, map[string]map[string]bool{"b": {"x": true}}},
		{"remove from a missing key", []op{{false, "a", "x"}}, map[string]map[string]bool{}},
		{"remove a missing value", []op{{true, "a", "x"}, {false, "a", "y"}}, map[string]map[string]bool{"a": {"x": true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]map[string]bool{}
			for _, o := range tc.ops {
				if o.add {
					Add(m, o.k, o.v)
				} else {
					Remove(m, o.k, o.v)
				}
			}
			if !reflect.DeepEqual(m, tc.want) {
				t.Errorf("got %v, want %v", m, tc.want)
			}
		})
	}
}

func TestAddCount(t *testing.T) {
	type op struct {
		k, v string
		d    int
	}
	cases := []struct {
		name string
		ops  []op
		want map[string]map[string]int
	}{
		{"add makes the set", []op{{"a", "x", 1}}, map[string]map[string]int{"a": {"x": 1}}},
		{"adds sum", []op{{"a", "x", 1}, {"a", "x", 2}}, map[string]map[string]int{"a": {"x": 3}}},
		{"zero drops the value", []op{{"a", "x", 1}, {"a", "y", 1}, {"a", "x", -1}}, map[string]map[string]int{"a": {"y": 1}}},
		{"the last to zero drops the key", []op{{"a", "x", 2}, {"b", "x", 1}, {"a", "x", -2}}, map[string]map[string]int{"b": {"x": 1}}},
		{"below zero is dropped too", []op{{"a", "x", -1}}, map[string]map[string]int{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]map[string]int{}
			for _, o := range tc.ops {
				AddCount(m, o.k, o.v, o.d)
			}
			if !reflect.DeepEqual(m, tc.want) {
				t.Errorf("got %v, want %v", m, tc.want)
			}
		})
	}
}
