package requestmatch

import (
	"net/url"
	"sort"
	"strings"
)

// httpRequest is a Request in the form the matchers read.
type httpRequest struct {
	method  string
	path    string
	query   map[string][]string
	headers map[string][]string // lower-case names
}

// parseRequest splits a query string and fragment off the path, merges the
// query with QueryParams and lower-cases header names. A request with no
// path asks for "/"; one with no method is a GET (a POST for gRPC), the
// method a client sends when none is named.
func parseRequest(req Request) httpRequest {
	r := httpRequest{method: req.Method, query: map[string][]string{}, headers: map[string][]string{}}
	if r.method == "" {
		r.method = "GET"
		if req.GRPC {
			r.method = "POST"
		}
	}
	path, rawQuery, _ := strings.Cut(req.Path, "?")
	path, _, _ = strings.Cut(path, "#")
	if path == "" {
		path = "/"
	}
	r.path = path
	rawQuery, _, _ = strings.Cut(rawQuery, "#")
	// ParseQuery keeps the pairs it can parse; a bad escape loses only its pair.
	q, _ := url.ParseQuery(rawQuery)
	for k, v := range q {
		r.query[k] = append(r.query[k], v...)
	}
	for _, k := range sortedKeys(req.QueryParams) {
		r.query[k] = append(r.query[k], req.QueryParams[k])
	}
	for _, k := range sortedKeys(req.Headers) {
		lk := strings.ToLower(k)
		r.headers[lk] = append(r.headers[lk], req.Headers[k])
	}
	return r
}

// sortedKeys keeps the merged values in a stable order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
