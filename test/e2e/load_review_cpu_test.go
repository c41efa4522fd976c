//go:build e2e && long

package e2e

import (
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apiserver"
)

// serverCPU is the server's CPU, in seconds, by the value of the pprof label apiserver.RequestLabel
// of the goroutines that spent it ("" for the unlabeled: the engine, informers, the GC's own
// workers, the HTTP/2 connections' readers and writers).
type serverCPU map[string]float64

func (c serverCPU) add(o serverCPU) {
	for k, v := range o {
		c[k] += v
	}
}

// profiled runs f while the server takes a CPU profile of seconds, straight from its port as the
// local admin, and returns the server's CPU by request label over that time.
func profiled(t *testing.T, seconds int, f func()) serverCPU {
	t.Helper()
	type result struct {
		cpu serverCPU
		err error
	}
	done := make(chan result, 1)
	go func() {
		cpu, err := serverProfile(t, seconds)
		done <- result{cpu, err}
	}()
	f()
	r := <-done
	if r.err != nil {
		t.Fatalf("the server's CPU profile: %v", r.err)
	}
	return r.cpu
}

func serverProfile(t *testing.T, seconds int) (serverCPU, error) {
	pki := filepath.Join(localDir(), "pki")
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, "admin.crt"), filepath.Join(pki, "admin.key"))
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	client := &http.Client{Timeout: time.Duration(seconds)*time.Second + time.Minute, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots, ServerName: "127.0.0.1"},
	}}
	resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%s/debug/pprof/profile?seconds=%d", localPort(t, "SERVER_PORT"), seconds))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /debug/pprof/profile: %d: %s", resp.StatusCode, body)
	}
	return cpuByLabel(body, apiserver.RequestLabel)
}

// cpuByLabel sums a gzipped CPU profile (profile.proto) by the value of the label key. The
// format's few fields needed here are read with the protobuf wire format directly: Profile's
// sample_type (1), sample (2) and string_table (6); Sample's value (2) and label (3); Label's key
// (1) and str (2), indexes into the string table.
func cpuByLabel(gz []byte, key string) (serverCPU, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	var types, samples [][]byte
	var strs []string
	err = eachField(data, func(num int, v uint64, b []byte) error {
		switch num {
		case 1:
			types = append(types, b)
		case 2:
			samples = append(samples, b)
		case 6:
			strs = append(strs, string(b))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	str := func(i uint64) string {
		if i < uint64(len(strs)) {
			return strs[i]
		}
		return ""
	}
	cpuIdx := -1
	for i, ty := range types {
		_ = eachField(ty, func(num int, v uint64, _ []byte) error {
			if num == 1 && str(v) == "cpu" {
				cpuIdx = i
			}
			return nil
		})
	}
	if cpuIdx < 0 {
		return nil, fmt.Errorf("no cpu sample type in the profile")
	}
	out := serverCPU{}
	for _, s := range samples {
		ns, label, err := sampleCPU(s, cpuIdx, key, str)
		if err != nil {
			return nil, err
		}
		out[label] += float64(ns) / 1e9
	}
	return out, nil
}

// sampleCPU returns a Sample's value at cpuIdx and the value of its label key.
func sampleCPU(s []byte, cpuIdx int, key string, str func(uint64) string) (int64, string, error) {
	var values []uint64
	var label string
	err := eachField(s, func(num int, v uint64, b []byte) error {
		switch {
		case num == 2 && b == nil:
			values = append(values, v)
		case num == 2: // packed
			for len(b) > 0 {
				x, n := binary.Uvarint(b)
				if n <= 0 {
					return fmt.Errorf("bad packed value")
				}
				values, b = append(values, x), b[n:]
			}
		case num == 3:
			var k, sv uint64
			_ = eachField(b, func(num int, v uint64, _ []byte) error {
				switch num {
				case 1:
					k = v
				case 2:
					sv = v
				}
				return nil
			})
			if str(k) == key {
				label = str(sv)
			}
		}
		return nil
	})
	if err != nil || cpuIdx >= len(values) {
		return 0, "", fmt.Errorf("a sample without its cpu value (%v)", err)
	}
	return int64(values[cpuIdx]), label, nil
}

// eachField calls f with every field of the protobuf message m: its number, and its varint
// value or its bytes (length-delimited; nil for the others).
func eachField(m []byte, f func(num int, v uint64, b []byte) error) error {
	for len(m) > 0 {
		tag, n := binary.Uvarint(m)
		if n <= 0 {
			return fmt.Errorf("bad tag")
		}
		m = m[n:]
		var v uint64
		var b []byte
		switch tag & 7 {
		case 0:
			if v, n = binary.Uvarint(m); n <= 0 {
				return fmt.Errorf("bad varint")
			}
		case 1:
			n = 8
		case 2:
			l, k := binary.Uvarint(m)
			if k <= 0 || uint64(len(m)-k) < l {
				return fmt.Errorf("bad length")
			}
			b, n = m[k:k+int(l)], k+int(l)
		case 5:
			n = 4
		default:
			return fmt.Errorf("wire type %d", tag&7)
		}
		if n > len(m) {
			return fmt.Errorf("truncated message")
		}
		if err := f(int(tag>>3), v, b); err != nil {
			return err
		}
		m = m[n:]
	}
	return nil
}

var reviewBodiesMetric = regexp.MustCompile(`(?m)^apiserver_request_body_size_bytes_count\{group="effectivepolicy\.dev",resource="effectivepolicyreviews",verb="create"\} (\S+)$`)

// reviewBodiesRead is how many EffectivePolicyReview bodies the server has read and decoded
// (the API server's apiserver_request_body_size_bytes, observed as a create handler reads one).
func reviewBodiesRead(t *testing.T) int {
	t.Helper()
	m := reviewBodiesMetric.FindStringSubmatch(scrapeServerMetrics(t))
	if m == nil {
		return 0 // none read yet
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("apiserver_request_body_size_bytes_count of reviews: %v", err)
	}
	return int(n)
}
