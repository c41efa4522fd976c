package check

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"
)

type boundKind int

const (
	noBound boundKind = iota
	numberBound
	durationBound
)

// bound is a max or min: a number, or a duration.
type bound struct {
	kind boundKind
	num  float64       // numberBound
	dur  time.Duration // durationBound
	text string        // as written
}

// parseBound reads a max or min: a YAML number, or a string that is a
// number or a duration as Go and Gateway API write them ("30s", "1m30s",
// "500ms").
func parseBound(v interface{}) (bound, error) {
	switch x := v.(type) {
	case int:
		return bound{kind: numberBound, num: float64(x), text: strconv.Itoa(x)}, nil
	case float64:
		return bound{kind: numberBound, num: x, text: strconv.FormatFloat(x, 'g', -1, 64)}, nil
	case string:
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return bound{kind: numberBound, num: f, text: x}, nil
		}
		if d, err := time.ParseDuration(x); err == nil {
			return bound{kind: durationBound, dur: d, text: x}, nil
		}
	}
	return bound{}, fmt.Errorf("%v is not a number or a duration (30s, 1m30s, 500ms)", v)
}

// lookup follows tokens into a decoded JSON value: object keys, or list
// indexes.
func lookup(v interface{}, tokens []string) (interface{}, bool) {
	for _, t := range tokens {
		switch x := v.(type) {
		case map[string]interface{}:
			var ok bool
			if v, ok = x[t]; !ok {
				return nil, false
			}
		case []interface{}:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// within says why value breaks b as a max (upper=true) or a min, "" when
// it does not.
func within(value interface{}, b bound, upper bool) string {
	word, cmp := "min", func(c int) bool { return c >= 0 }
	if upper {
		word, cmp = "max", func(c int) bool { return c <= 0 }
	}
	switch b.kind {
	case numberBound:
		f, ok := number(value)
		if !ok {
			return fmt.Sprintf("is %s, not a number (%s %s)", show(value), word, b.text)
		}
		if !cmp(compareFloat(f, b.num)) {
			return fmt.Sprintf("is %s, beyond %s %s", show(value), word, b.text)
		}
	case durationBound:
		s, _ := value.(string)
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Sprintf("is %s, not a duration (%s %s)", show(value), word, b.text)
		}
		if !cmp(compareFloat(float64(d), float64(b.dur))) {
			return fmt.Sprintf("is %s, beyond %s %s", show(value), word, b.text)
		}
	}
	return ""
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// number reads a JSON number, or a string that is one.
func number(v interface{}) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x)
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

// equal compares a spec's value with the one expected, as JSON: the YAML
// value is turned into JSON first (1 and 1.0 are equal).
func equal(got, want interface{}) bool {
	return reflect.DeepEqual(normalize(got), normalize(want))
}

// normalize is v through JSON: numbers float64, maps map[string]interface{}.
func normalize(v interface{}) interface{} {
	data, err := json.Marshal(v)
	if err != nil {
		// A YAML map with non-string keys: compare as YAML sees it.
		if data, err = yaml.Marshal(v); err != nil {
			return v
		}
		if data, err = yaml.YAMLToJSON(data); err != nil {
			return v
		}
	}
	var out interface{}
	if err := json.Unmarshal(data, &out); err != nil {
		return v
	}
	return out
}

// show prints a value short, as JSON.
func show(v interface{}) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(data) > 80 {
		return string(data[:77]) + "..."
	}
	return string(data)
}
