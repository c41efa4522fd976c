// Command alerteval evaluates the alerting rules of a Prometheus rule file
// on samples scraped from running servers, with Prometheus's own rule
// parser and PromQL engine, and prints, per alert, the series its
// expression returns (the alert would be pending, and firing once "for"
// has passed). The e2e tests (test/e2e/alerts_test.go) run it on the
// rules rendered from the Helm chart and the kustomize overlay and on the
// server's and kube-apiserver's real /metrics.
//
// It is a module of its own because Prometheus requires newer Kubernetes
// libraries than the server's module builds with.
//
// Usage:
//
//	alerteval -rules RULES.yaml [-at UNIX_SECONDS] JOB=METRICS.txt ...
//
// Every sample of METRICS.txt gets the labels job=JOB and instance=JOB, as a
// scrape would add them; all samples are stamped at -at (default: now).
// Output: a JSON object {"alert name": [{"label": "value", ...}, ...]}.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/tsdb"
)

func main() {
	rules := flag.String("rules", "", "Prometheus rule file (groups: ...)")
	at := flag.Int64("at", time.Now().Unix(), "evaluation time, Unix seconds")
	flag.Parse()
	if *rules == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: alerteval -rules RULES.yaml [-at UNIX_SECONDS] JOB=METRICS.txt ...")
		os.Exit(2)
	}
	out, err := run(*rules, time.Unix(*at, 0), flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "alerteval:", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "alerteval:", err)
		os.Exit(1)
	}
}

func run(rulesFile string, at time.Time, scrapes []string) (map[string][]map[string]string, error) {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	groups, errs := rulefmt.ParseFile(rulesFile, false, model.UTF8Validation, parser.NewParser(parser.Options{}), logger)
	if len(errs) > 0 {
		return nil, fmt.Errorf("rules: %v", errs)
	}
	dir, err := os.MkdirTemp("", "alerteval-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.DiscardHandler) // the database's start-up chatter
	db, err := tsdb.Open(dir, quiet, nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx := context.Background()
	for _, s := range scrapes {
		job, file, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want JOB=FILE", s)
		}
		if err := load(ctx, db, job, file, at); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	engine := promql.NewEngine(promql.EngineOpts{
		Logger: logger, MaxSamples: 10_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute,
	})
	out := map[string][]map[string]string{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			series, err := eval(ctx, engine, db, r.Expr, at)
			if err != nil {
				return nil, fmt.Errorf("alert %s: %w", r.Alert, err)
			}
			out[r.Alert] = append(out[r.Alert], series...)
		}
	}
	return out, nil
}

// eval runs expr as an instant query at t and returns the labels of the
// series it returns.
func eval(ctx context.Context, engine *promql.Engine, db *tsdb.DB, expr string, t time.Time) ([]map[string]string, error) {
	q, err := engine.NewInstantQuery(ctx, db, nil, expr, t)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	res := q.Exec(ctx)
	if res.Err != nil {
		return nil, res.Err
	}
	vec, err := res.Vector()
	if err != nil {
		return nil, err
	}
	series := make([]map[string]string, 0, len(vec))
	for _, s := range vec {
		series = append(series, s.Metric.Map())
	}
	return series, nil
}
