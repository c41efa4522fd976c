package istio

// How Istio merges the sections of the Telemetries that reach a proxy, in
// applicableTelemetries' order (istio.io/istio release-1.31, pilot/pkg/model/telemetry.go):
//
//   - Tracing: every tracing entry whose match.mode takes the proxy's mode overrides field by
//     field what came before: the first of its providers (only one provider a mode),
//     disableSpanReporting, customTags (whole), randomSamplingPercentage,
//     useRequestIdForTraceSampling, enableIstioTags, disableContextPropagation.
//   - mergeLogs: each Telemetry with accessLogging is a level. The providers in play are those
//     the last level names (in entries of the proxy's mode), else meshConfig's default
//     providers. An entry without providers uses the previous entry's (the defaults at
//     first). Each provider in play ends as the last entry of the mode that uses it made it:
//     disabled, or enabled with the filter of the last entry of the mode that named it
//     explicitly. Its name is shown as that entry's.
//   - mergeMetrics: the providers in play are the last explicitly named, else the defaults;
//     an entry without providers uses the previous entry's; per provider, the last
//     reportingInterval wins and the overrides of every entry apply in order (disabling a
//     metric, adding or removing tags).
//
// meshConfig is not read: the default providers are one provider with no name, shown as an
// entry without providers (what such an entry means in a Telemetry). A Telemetry naming a
// default provider explicitly is taken for another provider.

import (
	"fmt"
	"sort"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

// defaultProvider stands for meshConfig's default providers of a section.
const defaultProvider = ""

// tracingFields are the fields of a tracing entry that override field by field.
var tracingFields = []string{"disableSpanReporting", "customTags", "randomSamplingPercentage",
	"useRequestIdForTraceSampling", "enableIstioTags", "disableContextPropagation"}

// telemetryMerge builds the merged spec, counting what every entry wrote (its Totals): a
// part written again later keeps only its last writer's count in the result.
type telemetryMerge struct {
	es     []semantics.FoldEntry
	writes []map[string]int // per entry: the leaves it last wrote at each part
}

func (o *telemetryMerge) note(src int, part string, leaves int) {
	if o.writes[src] == nil {
		o.writes[src] = map[string]int{}
	}
	o.writes[src][part] = leaves
}

func (o *telemetryMerge) forget(src int, part string) { delete(o.writes[src], part) }

// section is the list at key of entry i's spec, its objects only.
func (o *telemetryMerge) section(i int, key string) []map[string]interface{} {
	return objects(o.es[i].Entry.Spec[key])
}

func objects(v interface{}) []map[string]interface{} {
	l, _ := v.([]interface{})
	out := make([]map[string]interface{}, 0, len(l))
	for _, it := range l {
		if m, ok := it.(map[string]interface{}); ok {
			out = append(out, m)
		}
	}
	return out
}

// leaves counts the fieldSources keys v makes.
func leaves(v interface{}) int {
	n := 0
	merge.WalkLeaves(merge.Build(v, 0, nil), "", func(string, int) { n++ })
	return n
}

// modeMatches says whether an entry whose match is match applies in mode (unset and
// CLIENT_AND_SERVER take both modes).
func modeMatches(match interface{}, mode string) bool {
	m, _ := match.(map[string]interface{})
	md, _ := m["mode"].(string)
	return md == "" || md == "CLIENT_AND_SERVER" || md == mode
}

// providerNames is the names of an entry's providers (getProviderNames).
func providerNames(e map[string]interface{}) []string {
	var out []string
	for _, p := range objects(e["providers"]) {
		name, _ := p["name"].(string)
		out = append(out, name)
	}
	return out
}

func providerRef(name string) []interface{} {
	return []interface{}{map[string]interface{}{"name": name}}
}

func setOf(l []string) map[string]bool {
	s := make(map[string]bool, len(l))
	for _, v := range l {
		s[v] = true
	}
	return s
}

// sortedKeys are the providers of a section in name order, the defaults first.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// tracing is the tracing Istio configures in mode (Telemetries.Tracing): one entry.
func (o *telemetryMerge) tracing(order []int, mode string) *merge.Value {
	obj := &merge.Value{IsObj: true, Obj: map[string]*merge.Value{}}
	last := -1
	for _, i := range order {
		for _, t := range o.section(i, "tracing") {
			if !modeMatches(t["match"], mode) {
				continue
			}
			last = i
			if names := providerNames(t); len(names) > 0 {
				obj.Obj["providers"] = merge.Build(providerRef(names[0]), i, nil)
				o.note(i, "/tracing/providers", 1)
			}
			for _, f := range tracingFields {
				if v, ok := t[f]; ok && v != nil {
					obj.Obj[f] = merge.Build(v, i, nil)
					o.note(i, "/tracing/"+f, leaves(v))
				}
			}
		}
	}
	if last < 0 {
		return nil
	}
	if len(obj.Obj) == 0 { // tracing entries that set nothing: the defaults apply
		obj.Src = last
		o.note(last, "/tracing", 1)
	}
	return merge.List([]*merge.Value{obj}, last)
}

// logSetting is what an access logging provider ends as, and which entry made it so.
type logSetting struct {
	src      int
	disabled bool
}

type sourced struct {
	v   interface{}
	src int
}

// accessLogging is the access logging Istio configures in mode (mergeLogs): one entry a
// provider.
func (o *telemetryMerge) accessLogging(order []int, mode string) *merge.Value {
	var levels []int
	for _, i := range order {
		if len(o.section(i, "accessLogging")) > 0 {
			levels = append(levels, i)
		}
	}
	if len(levels) == 0 {
		return nil
	}
	inPlay := []string{defaultProvider}
	filters := map[string]sourced{}
	for _, i := range levels {
		var names []string
		for _, l := range o.section(i, "accessLogging") {
			if !modeMatches(l["match"], mode) {
				continue
			}
			for _, p := range providerNames(l) {
				names = append(names, p)
				filters[p] = sourced{l["filter"], i}
				o.note(i, "/accessLogging/"+p+"/providers", 1)
				if l["filter"] != nil {
					o.note(i, "/accessLogging/"+p+"/filter", leaves(l["filter"]))
				} else {
					o.forget(i, "/accessLogging/"+p+"/filter")
				}
			}
		}
		if len(names) > 0 {
			inPlay = names
		}
	}
	return o.logItems(o.logSettings(levels, mode, setOf(inPlay)), filters)
}

// logSettings is mergeLogs' second pass: what each provider in play ends as.
func (o *telemetryMerge) logSettings(levels []int, mode string, inPlay map[string]bool) map[string]logSetting {
	settings := map[string]logSetting{}
	parent := []string{defaultProvider}
	for _, i := range levels {
		for _, l := range o.section(i, "accessLogging") {
			names := providerNames(l)
			if len(names) == 0 {
				names = parent
			}
			parent = names
			if !modeMatches(l["match"], mode) {
				continue
			}
			disabled, _ := l["disabled"].(bool)
			for _, p := range names {
				o.noteLogSetting(i, p, disabled)
				if inPlay[p] {
					settings[p] = logSetting{src: i, disabled: disabled}
				}
			}
		}
	}
	return settings
}

// noteLogSetting counts what entry i makes of provider p: disabled, or (the defaults,
// which have no name to show) an empty entry.
func (o *telemetryMerge) noteLogSetting(i int, p string, disabled bool) {
	base := "/accessLogging/" + p
	o.forget(i, base+"/disabled")
	o.forget(i, base)
	switch {
	case disabled:
		o.note(i, base+"/disabled", 1)
	case p == defaultProvider:
		o.note(i, base, 1)
	}
}

func (o *telemetryMerge) logItems(settings map[string]logSetting, filters map[string]sourced) *merge.Value {
	if len(settings) == 0 {
		return nil
	}
	var items []*merge.Value
	for _, p := range sortedKeys(settings) {
		s := settings[p]
		it := &merge.Value{IsObj: true, Obj: map[string]*merge.Value{}, Src: s.src}
		f := filters[p] // the last entry of the mode naming p (every provider but the defaults)
		if p != defaultProvider {
			it.Obj["providers"] = merge.Build(providerRef(p), f.src, nil)
		}
		if s.disabled {
			it.Obj["disabled"] = merge.Build(true, s.src, nil)
		} else if f.v != nil {
			it.Obj["filter"] = merge.Build(f.v, f.src, nil)
		}
		items = append(items, it)
	}
	return merge.List(items, items[0].Src)
}

// metricsSetting is what one metrics provider ends as.
type metricsSetting struct {
	namer, last int // the entry that named it last (-1 for the defaults), the last that used it
	interval    *merge.Value
	overrides   []*merge.Value
}

// metrics is the metrics Istio configures in mode (mergeMetrics): one entry a provider, its
// overrides those of every entry of the mode, in order.
func (o *telemetryMerge) metrics(order []int, mode string) *merge.Value {
	type entry struct {
		m   map[string]interface{}
		src int
	}
	var all []entry
	inPlay := []string{defaultProvider}
	for _, i := range order {
		for _, m := range o.section(i, "metrics") {
			all = append(all, entry{m, i})
			if names := providerNames(m); len(names) > 0 {
				inPlay = names
			}
		}
	}
	if len(all) == 0 {
		return nil
	}
	play := setOf(inPlay)
	settings := map[string]*metricsSetting{}
	parent := []string{defaultProvider}
	for n, e := range all {
		names := providerNames(e.m)
		explicit := len(names) > 0
		if !explicit {
			names = parent
		}
		parent = names
		for _, p := range names {
			o.noteMetrics(n, e.src, p, e.m, explicit, mode)
			if !play[p] {
				continue
			}
			s := settings[p]
			if s == nil {
				s = &metricsSetting{namer: -1}
				settings[p] = s
			}
			o.applyMetrics(s, e.src, p, e.m, explicit, mode)
		}
	}
	return o.metricsItems(settings)
}

// noteMetrics counts what metrics entry n (of policy entry i) says of provider p.
func (o *telemetryMerge) noteMetrics(n, i int, p string, m map[string]interface{}, explicit bool, mode string) {
	base := "/metrics/" + p
	if explicit && p != defaultProvider {
		o.note(i, base+"/providers", 1)
	}
	if ri := m["reportingInterval"]; ri != nil {
		o.note(i, base+"/reportingInterval", 1)
	}
	for k, ov := range objects(m["overrides"]) {
		if modeMatches(ov["match"], mode) {
			o.note(i, fmt.Sprintf("%s/overrides/%d.%d", base, n, k), leaves(ov))
		}
	}
}

func (o *telemetryMerge) applyMetrics(s *metricsSetting, i int, p string, m map[string]interface{}, explicit bool, mode string) {
	s.last = i
	if explicit && p != defaultProvider {
		s.namer = i
	}
	if ri := m["reportingInterval"]; ri != nil {
		s.interval = merge.Build(ri, i, nil)
	}
	for _, ov := range objects(m["overrides"]) {
		if modeMatches(ov["match"], mode) {
			s.overrides = append(s.overrides, merge.Build(ov, i, nil))
		}
	}
}

func (o *telemetryMerge) metricsItems(settings map[string]*metricsSetting) *merge.Value {
	if len(settings) == 0 {
		return nil
	}
	var items []*merge.Value
	for _, p := range sortedKeys(settings) {
		s := settings[p]
		it := &merge.Value{IsObj: true, Obj: map[string]*merge.Value{}, Src: s.last}
		if p != defaultProvider {
			it.Obj["providers"] = merge.Build(providerRef(p), s.namer, nil)
		}
		if s.interval != nil {
			it.Obj["reportingInterval"] = s.interval
		}
		if len(s.overrides) > 0 {
			it.Obj["overrides"] = merge.List(s.overrides, s.last)
		}
		if len(it.Obj) == 0 { // the default providers, as they are
			o.note(s.last, "/metrics/"+p, 1)
		}
		items = append(items, it)
	}
	return merge.List(items, items[0].Src)
}
