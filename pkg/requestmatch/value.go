package requestmatch

import (
	"fmt"
	"regexp"
	"strings"
)

// matchValue compares one header, query parameter or gRPC name against a
// match value. Regular expressions must match the whole value, as Envoy's
// and most proxies' safe_regex matchers do, and use Go's RE2 syntax (the
// dialect is implementation-specific in the Gateway API). An unusable
// pattern or type is an error and the match fails.
func matchValue(t MatchType, pattern, value string) (bool, error) {
	switch t {
	case "", MatchExact:
		return pattern == value, nil
	case MatchRegularExpression:
		re, err := compileFull(pattern)
		if err != nil {
			return false, err
		}
		return re.MatchString(value), nil
	default:
		return false, fmt.Errorf("unsupported match type %q", t)
	}
}

func compileFull(pattern string) (*regexp.Regexp, error) {
	re, err := regexp.Compile("^(?:" + pattern + ")$")
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q", pattern)
	}
	return re, nil
}

// matchHeaders holds when every header match holds. Names are
// case-insensitive; only the first match of a name counts, as the API says
// of equivalent names. n is the number of header matches, for precedence.
func matchHeaders(ms []HeaderMatch, headers map[string][]string) (ok bool, n int, err error) {
	seen := map[string]bool{}
	ok = true
	for _, m := range ms {
		name := strings.ToLower(m.Name)
		if seen[name] {
			continue
		}
		seen[name] = true
		n++
		if !anyValue(m.Type, m.Value, headers[name], &err) {
			ok = false
		}
	}
	return ok && err == nil, n, err
}

// matchQuery is matchHeaders for query parameters, whose names are
// case-sensitive.
func matchQuery(ms []QueryParamMatch, query map[string][]string) (ok bool, n int, err error) {
	seen := map[string]bool{}
	ok = true
	for _, m := range ms {
		if seen[m.Name] {
			continue
		}
		seen[m.Name] = true
		n++
		if !anyValue(m.Type, m.Value, query[m.Name], &err) {
			ok = false
		}
	}
	return ok && err == nil, n, err
}

// anyValue reports whether one of values matches. A bad pattern is recorded
// in *errp even when the request lacks the name, so the message shows it.
func anyValue(t MatchType, pattern string, values []string, errp *error) bool {
	if _, err := matchValue(t, pattern, ""); err != nil {
		if *errp == nil {
			*errp = err
		}
		return false
	}
	for _, v := range values {
		if ok, _ := matchValue(t, pattern, v); ok {
			return true
		}
	}
	return false
}
