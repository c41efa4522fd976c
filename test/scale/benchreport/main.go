// Command benchreport turns `go test -bench` output of package scale into
// docs/benchmarks/inprocess.md and inprocess.json (hack/bench.sh runs it).
//
//	benchreport -o docs/benchmarks/inprocess -machine "key=value" ... bench1.txt bench2.txt
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/benchkit"
)

type result struct {
	Name        string             `json:"name"`
	Procs       int                `json:"procs"`
	Iterations  int64              `json:"iterations"`
	NsPerOp     float64            `json:"nsPerOp"`
	BytesPerOp  float64            `json:"bytesPerOp,omitempty"`
	AllocsPerOp float64            `json:"allocsPerOp,omitempty"`
	Metrics     map[string]float64 `json:"metrics,omitempty"`
}

type target struct {
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
}

type report struct {
	Machine    map[string]string `json:"machine"`
	Order      []string          `json:"-"`
	Benchmarks []result          `json:"benchmarks"`
	Targets    []target          `json:"targets"`
}

func main() {
	var machine benchkit.KV
	out := flag.String("o", "inprocess", "output path without extension (.md and .json are written)")
	flag.Var(&machine, "machine", "key=value describing the machine or run (repeatable, kept in order)")
	flag.Parse()

	r := report{Machine: map[string]string{}}
	for i, k := range machine.Keys {
		r.Machine[k] = machine.Vals[i]
		r.Order = append(r.Order, k)
	}
	for _, path := range flag.Args() {
		f, err := os.Open(path)
		if err != nil {
			fail(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if res, ok := parse(sc.Text()); ok {
				r.Benchmarks = append(r.Benchmarks, res)
			}
		}
		_ = f.Close()
	}
	if len(r.Benchmarks) == 0 {
		fail(fmt.Errorf("no benchmark results in %v", flag.Args()))
	}
	r.Targets = targets(r.Benchmarks)

	data, _ := json.MarshalIndent(r, "", "  ")
	if err := os.WriteFile(*out+".json", append(data, '\n'), 0o644); err != nil {
		fail(err)
	}
	if err := os.WriteFile(*out+".md", []byte(markdown(r)), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchreport:", err)
	os.Exit(1)
}

// parse reads "BenchmarkX-2  10  123 ns/op  45 B/op  6 allocs/op  7.0 keys/op".
func parse(line string) (result, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
		return result{}, false
	}
	res := result{Name: strings.TrimPrefix(f[0], "Benchmark"), Procs: 1, Metrics: map[string]float64{}}
	if i := strings.LastIndex(res.Name, "-"); i > 0 {
		if p, err := strconv.Atoi(res.Name[i+1:]); err == nil {
			res.Name, res.Procs = res.Name[:i], p
		}
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return result{}, false
	}
	res.Iterations = n
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return result{}, false
		}
		switch f[i+1] {
		case "ns/op":
			res.NsPerOp = v
		case "B/op":
			res.BytesPerOp = v
		case "allocs/op":
			res.AllocsPerOp = v
		default:
			res.Metrics[f[i+1]] = v
		}
	}
	return res, true
}

func find(rs []result, name string) *result {
	for i := range rs {
		if rs[i].Name == name {
			return &rs[i]
		}
	}
	return nil
}

// targets evaluates the in-process goals of docs/benchmarks.
func targets(rs []result) []target {
	var out []target
	if r := find(rs, "FullComputation"); r != nil {
		out = append(out, target{
			Goal:     "full computation (every object fed in bulk mode, every key computed on GOMAXPROCS goroutines: the start-up path) < 5 s",
			Measured: fmt.Sprintf("%s for %.0f keys%s", dur(r.NsPerOp), r.Metrics["keys"], cpu(r)),
			Met:      r.NsPerOp < 5e9,
		})
	}
	if r := find(rs, "ComputeAll"); r != nil {
		out = append(out, target{
			Goal:     "full computation, bulk feed (ComputeAll) < 5 s",
			Measured: fmt.Sprintf("%s for %.0f keys%s", dur(r.NsPerOp), r.Metrics["keys"], cpu(r)),
			Met:      r.NsPerOp < 5e9,
		})
	}
	for _, name := range []string{"IncrementalGatewayPolicyEdit", "IncrementalListenerPolicyEdit"} {
		if r := find(rs, name); r != nil && r.Metrics["keys/op"] > 0 {
			per200 := r.NsPerOp / r.Metrics["keys/op"] * 200
			out = append(out, target{
				Goal: "an edit reaching ~200 targets recomputed well under 300 ms (" + name + ")",
				Measured: fmt.Sprintf("%s for %.0f keys, i.e. %s per 200 keys",
					dur(r.NsPerOp), r.Metrics["keys/op"], dur(per200)),
				Met: per200 < 150e6,
			})
		}
	}
	if r := find(rs, "MemoryPerTarget"); r != nil {
		if rss, ok := r.Metrics["peak-RSS-MB"]; ok {
			out = append(out, target{
				Goal: "memory: RSS < 1 GiB overall (inputs + engine + outputs, one process)",
				Measured: fmt.Sprintf("peak RSS %.0f MiB (inputs %.0f MiB, engine %.0f MiB, outputs+memo %.0f MiB heap; %.0f B per key)",
					rss, r.Metrics["input-MB"], r.Metrics["engine-MB"], r.Metrics["outputs+memo-MB"], r.Metrics["heap-B/key"]),
				Met: rss < 1024,
			})
		}
	}
	return out
}

// cpu describes the CPU time of an op, when the benchmark reported it.
func cpu(r *result) string {
	if c, ok := r.Metrics["cpu-s/op"]; ok {
		return fmt.Sprintf(" (CPU %s, all threads)", dur(c*1e9))
	}
	return ""
}

func dur(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.2f s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.1f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

func bytes(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
}

func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		s := strconv.FormatInt(int64(v), 10)
		// thousands separators
		var b strings.Builder
		neg := strings.HasPrefix(s, "-")
		s = strings.TrimPrefix(s, "-")
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		if neg {
			return "-" + b.String()
		}
		return b.String()
	}
	switch a := math.Abs(v); {
	case a >= 100:
		return num(math.Round(v))
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func markdown(r report) string {
	var b strings.Builder
	b.WriteString("# In-process benchmarks\n\n")
	b.WriteString("Generated by `hack/bench.sh` (`make bench`); do not edit by hand. ")
	b.WriteString("Analysis and the comparison with the targets: [README.md](README.md). ")
	b.WriteString("CPU profiles: [profile-full.txt](profile-full.txt), [profile-incremental.txt](profile-incremental.txt).\n\n")
	b.WriteString("## Machine and run\n\n| | |\n|---|---|\n")
	for _, k := range r.Order {
		fmt.Fprintf(&b, "| %s | %s |\n", k, strings.ReplaceAll(r.Machine[k], "|", "\\|"))
	}
	b.WriteString("\n## Results\n\n")
	b.WriteString("| benchmark | iterations | time/op | allocs/op | B/op | custom metrics |\n|---|---:|---:|---:|---:|---|\n")
	for _, res := range r.Benchmarks {
		var ms []string
		keys := make([]string, 0, len(res.Metrics))
		for k := range res.Metrics {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := res.Metrics[k]
			switch k {
			case "ns/key":
				ms = append(ms, fmt.Sprintf("%s/key", dur(v)))
			default:
				ms = append(ms, fmt.Sprintf("%s %s", num(v), k))
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s |\n", res.Name, res.Iterations, dur(res.NsPerOp),
			num(res.AllocsPerOp), bytes(res.BytesPerOp), strings.Join(ms, ", "))
	}
	b.WriteString("\n## Targets that apply in-process\n\n| goal | measured | met |\n|---|---|---|\n")
	for _, t := range r.Targets {
		met := "no"
		if t.Met {
			met = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.Goal, t.Measured, met)
	}
	b.WriteString("\n\"Per 200 keys\" scales the measured edit to the issue's ~200 targets; an edit is met when that is under 150 ms (half the 300 ms budget).\n")
	return b.String()
}
