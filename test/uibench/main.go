// Command uibench measures the page of `kubectl effectivepolicy ui` in
// headless Chromium (hack/bench-ui.sh runs it; docs/benchmarks/ui.md): the
// time from navigation to the first frame after the graph is laid out
// (interactive), and from a click on a route to its stack drawn, beside the
// same route's `kubectl get effectivepolicy -o yaml` in the same run when
// a cluster is given.
//
//	go run ./test/uibench -plugin bin/kubectl-effectivepolicy -f topology.yaml      # offline
//	go run ./test/uibench -plugin bin/kubectl-effectivepolicy -kubeconfig KUBECONFIG # online
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"time"
)

type options struct {
	plugin, file, kubeconfig, chromium string
	baseline, baseName                 string
	runs                               int
	out, screenshot                    string
}

func main() {
	var o options
	flag.StringVar(&o.plugin, "plugin", "bin/kubectl-effectivepolicy", "the plugin binary")
	flag.StringVar(&o.file, "f", "", "offline: the topology's manifests (ui --offline -f)")
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "online: the cluster with the topology loaded")
	flag.StringVar(&o.chromium, "chromium", "chromium", "the Chromium binary")
	flag.StringVar(&o.baseline, "baseline", "", "a plugin to measure first in the same run, beside -plugin (built from main: hack/bench-ui.sh BENCH_BASE=main)")
	flag.StringVar(&o.baseName, "baseline-name", "baseline", "what the baseline is, for the report")
	flag.IntVar(&o.runs, "runs", 5, "page loads and clicks measured")
	flag.StringVar(&o.out, "o", "-", "the report (Markdown), - for stdout")
	flag.StringVar(&o.screenshot, "screenshot", "", "a PNG of the page after the last click (docs/ui/focus.png)")
	flag.Parse()
	if (o.file == "") == (o.kubeconfig == "") {
		fmt.Fprintln(os.Stderr, "uibench: give one of -f (offline) and -kubeconfig (online)")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "uibench:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &report{Mode: "offline", Runs: o.runs, LoadBefore: loadAverage(), BaseName: o.baseName}
	if o.kubeconfig != "" {
		r.Mode = "online"
	}
	if o.baseline != "" {
		r.Base = &measures{}
		if _, _, err := measurePlugin(ctx, o, o.baseline, r.Base); err != nil {
			return fmt.Errorf("baseline %s: %w", o.baseline, err)
		}
	}
	g, route, err := measurePlugin(ctx, o, o.plugin, &r.measures)
	if err != nil {
		return err
	}
	r.Focus, r.Nodes, r.Edges, r.Targets = g.Focus, len(g.Nodes), len(g.Edges), g.Summary
	r.Route = route.Namespace + "/" + route.Name
	if o.kubeconfig != "" {
		for range o.runs {
			d, err := kubectlGet(ctx, o.kubeconfig, route.Namespace, route.Name)
			if err != nil {
				return err
			}
			r.KubectlGet = append(r.KubectlGet, d)
		}
	}
	r.LoadAfter = loadAverage()
	return r.write(o.out)
}

// measurePlugin serves the page with plugin and measures it into m; it
// answers the graph and the route clicked.
func measurePlugin(ctx context.Context, o options, plugin string, m *measures) (graph, node, error) {
	srv, err := startUI(ctx, o, plugin)
	if err != nil {
		return graph{}, node{}, err
	}
	defer srv.stop()
	m.ServerReady = srv.ready
	g, took, err := srv.graph()
	if err != nil {
		return g, node{}, err
	}
	m.GraphGET = took
	route := busiestRoute(g)
	if route.ID == "" {
		return g, route, errors.New("the graph has no route target")
	}
	if err := measurePage(ctx, o, srv.url, route.ID, m); err != nil {
		return g, route, err
	}
	for range o.runs {
		d, err := srv.target(route)
		if err != nil {
			return g, route, err
		}
		m.TargetGET = append(m.TargetGET, d)
	}
	return g, route, nil
}

// ui is the plugin's server while it runs.
type ui struct {
	cmd   *exec.Cmd
	url   string
	token string
	ready time.Duration
}

var urlLine = regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=(\S+)`)

func startUI(ctx context.Context, o options, plugin string) (*ui, error) {
	args := []string{"ui", "-A"}
	if o.file != "" {
		args = append(args, "--offline", "-f", o.file)
	} else {
		args = append([]string{"--kubeconfig", o.kubeconfig}, args...)
	}
	cmd := exec.CommandContext(ctx, plugin, args...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	u := &ui{cmd: cmd}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if m := urlLine.FindStringSubmatch(sc.Text()); m != nil {
			u.url, u.token, u.ready = m[0], m[1], time.Since(start)
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return u, nil
		}
	}
	u.stop()
	return nil, fmt.Errorf("ui printed no URL: %v", cmd.Wait())
}

func (u *ui) stop() {
	_ = u.cmd.Process.Signal(os.Interrupt)
	_ = u.cmd.Wait()
}

// node and graph are what /api/graph answers (pkg/cli/ui Graph).
type node struct {
	ID, Kind, Namespace, Name, Group, Label string
	Target                                  bool
}

type graph struct {
	Nodes   []node
	Edges   []json.RawMessage
	Summary string
	Focus   string
}

func (u *ui) get(path string) ([]byte, time.Duration, error) {
	base, _, _ := strings.Cut(u.url, "?")
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("X-EffectivePolicy-Token", u.token)
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	took := time.Since(start)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s: %s", path, res.Status, body)
	}
	return body, took, err
}

func (u *ui) graph() (graph, time.Duration, error) {
	var g graph
	body, took, err := u.get("api/graph")
	if err == nil {
		err = json.Unmarshal(body, &g)
	}
	return g, took, err
}

func (u *ui) target(n node) (time.Duration, error) {
	_, took, err := u.get("api/target?group=" + n.Group + "&kind=" + n.Kind + "&namespace=" + n.Namespace + "&name=" + n.Name)
	return took, err
}

// busiestRoute is the route target drawn whose label counts the most
// policies (the longest stack to draw), the first by id among equals.
func busiestRoute(g graph) node {
	var best node
	most := -1
	for _, n := range g.Nodes {
		if !n.Target || !strings.HasSuffix(n.Kind, "Route") {
			continue
		}
		var count int
		lines := strings.Split(n.Label, "\n")
		_, _ = fmt.Sscanf(lines[len(lines)-1], "%d", &count)
		if count > most {
			best, most = n, count
		}
	}
	return best
}

func kubectlGet(ctx context.Context, kubeconfig, namespace, name string) (time.Duration, error) {
	start := time.Now()
	out, err := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig, "get", "effectivepolicy", name, "-n", namespace, "-o", "yaml").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("kubectl get: %v: %s", err, out)
	}
	return time.Since(start), nil
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}

// stats is the median, minimum and maximum of ds.
func stats(ds []time.Duration) string {
	if len(ds) == 0 {
		return "—"
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
	return fmt.Sprintf("%s (%s–%s)", ms(s[len(s)/2]), ms(s[0]), ms(s[len(s)-1]))
}
