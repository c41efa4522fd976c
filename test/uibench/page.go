package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// readyScript runs before the page's own: it notes the time (from the
// navigation's start) of the first frame painted after the page marks
// itself ready, the graph drawn and laid out, when a click is answered.
const readyScript = `new MutationObserver((_, obs) => {
  if (document.body && document.body.dataset.ready) {
    obs.disconnect();
    requestAnimationFrame(() => requestAnimationFrame(() => { window.__interactive = performance.now(); }));
  }
}).observe(document, { attributes: true, childList: true, subtree: true });`

// clickScript taps a node and answers the time until its stack is in the
// panel and painted.
const clickScript = `new Promise((resolve) => {
  const panel = document.querySelector('#panel');
  panel.replaceChildren();
  const t0 = performance.now();
  const obs = new MutationObserver(() => {
    if (!panel.querySelector('ul.tree')) return;
    obs.disconnect();
    requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - t0)));
  });
  obs.observe(panel, { childList: true, subtree: true });
  window.epGraph.tap(%q);
})`

// measurePage loads the page o.runs times, each time clicking route.
func measurePage(ctx context.Context, o options, url, route string, r *measures) error {
	profile, err := os.MkdirTemp("", "uibench-chromium")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(o.chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(profile),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1400, 800))
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if err := chromedp.Do(bctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: readyScript})
		return err
	})); err != nil {
		return err
	}
	for range o.runs {
		if err := loadOnce(bctx, url, route, r); err != nil {
			return err
		}
	}
	if o.screenshot == "" {
		return nil
	}
	png, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		return err
	}
	return os.WriteFile(o.screenshot, png, 0o644)
}

// readyPoll is how often the benchmark asks whether the page is ready:
// chromedp's default (5 ms) costs Chromium CPU of its own while the page
// waits for the graph, which the load's CPU figure would count.
const readyPoll = 100 * time.Millisecond

func loadOnce(ctx context.Context, url, route string, r *measures) error {
	browser := 0
	if p := chromedp.FromContext(ctx).Browser.Process(); p != nil {
		browser = p.Pid
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cpu0 := treeCPU(browser)
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady(`body[data-ready]`, chromedp.RetryInterval(readyPoll))); err != nil {
		return err
	}
	ready, err := chromedp.Run(ctx, chromedp.AttributeValue(`body`, "data-ready"))
	if err != nil {
		return err
	}
	if ready.Value != "true" {
		return fmt.Errorf("the page is not ready: %s", ready.Value)
	}
	interactive, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`new Promise((resolve) => {
		const wait = () => window.__interactive ? resolve(window.__interactive) : setTimeout(wait, 10);
		wait();
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		return err
	}
	loadCPU := treeCPU(browser) - cpu0
	fetched, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`(performance.getEntriesByType('resource').find((e) => e.name.includes('api/graph')) || {}).responseEnd || 0`))
	if err != nil {
		return err
	}
	if err := readPhases(ctx, r); err != nil {
		return err
	}
	cpu1 := treeCPU(browser)
	click, err := chromedp.Run(ctx, chromedp.Evaluate[float64](fmt.Sprintf(clickScript, route), chromedp.EvalAwaitPromise))
	if err != nil {
		return err
	}
	r.ClickCPU = append(r.ClickCPU, treeCPU(browser)-cpu1)
	r.LoadCPU = append(r.LoadCPU, loadCPU)
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	r.Interactive = append(r.Interactive, ms(interactive))
	r.GraphFetched = append(r.GraphFetched, ms(fetched))
	r.Click = append(r.Click, ms(click))
	return nil
}

// phasesScript answers the page's own marks (web/src: ep:graph-read,
// ep:folded, ep:laid-out, ep:drawn), ms from the navigation's start; a
// page without them answers none.
const phasesScript = `Object.fromEntries(performance.getEntriesByType('mark').filter((m) => m.name.startsWith('ep:')).map((m) => [m.name, m.startTime]))`

// readPhases adds the time of each phase of the load: from the mark before.
func readPhases(ctx context.Context, r *measures) error {
	marks, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](phasesScript))
	if err != nil {
		return err
	}
	if r.Phases == nil {
		r.Phases = map[string][]time.Duration{}
	}
	prev := 0.0
	for _, name := range phaseNames {
		at, ok := marks[name]
		if !ok {
			continue
		}
		r.Phases[name] = append(r.Phases[name], time.Duration((at-prev)*float64(time.Millisecond)))
		prev = at
	}
	return nil
}
