package measure

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

// listBuf is the body buffer of every timed LIST: one buffer, grown once.
// With a fresh 521 MB buffer per LIST (DoRaw), the client's own allocation,
// page faults and garbage collection made EffectivePolicy LISTs take
// anywhere from 3.5 to 12 s in one run, while kubectl (a fresh process
// each time) took 3.5-4 s every time.
var listBuf bytes.Buffer

// TimedList times a LIST of path until its whole body has been read, and
// returns the body (valid until the next call).
func TimedList(ctx context.Context, rc rest.Interface, path string) (report.ListRun, []byte, error) {
	listBuf.Reset()
	t0 := time.Now()
	stream, err := rc.Get().AbsPath(path).SetHeader("Accept", "application/json").Stream(ctx)
	if err == nil {
		_, err = listBuf.ReadFrom(stream)
		_ = stream.Close()
	}
	d := time.Since(t0)
	if err != nil {
		return report.ListRun{}, nil, fmt.Errorf("LIST %s: %w", path, err)
	}
	body := listBuf.Bytes()
	n, err := countItems(body)
	if err != nil {
		return report.ListRun{}, nil, fmt.Errorf("LIST %s: %w", path, err)
	}
	return report.ListRun{Seconds: d.Seconds(), Bytes: len(body), Objects: n,
		ObjectsPerSec: float64(n) / d.Seconds(), BytesPerSecond: float64(len(body)) / d.Seconds()}, body, nil
}

// countItems counts the items of a JSON list without decoding (or copying)
// them.
func countItems(body []byte) (int, error) {
	var l struct {
		Items []struct{} `json:"items"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		return 0, err
	}
	return len(l.Items), nil
}

// MedianRun is the repetition of median time.
func MedianRun(rs []report.ListRun) report.ListRun {
	c := append([]report.ListRun(nil), rs...)
	sort.Slice(c, func(i, j int) bool { return c[i].Seconds < c[j].Seconds })
	return c[len(c)/2]
}
