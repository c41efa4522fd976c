package translator

// This file is added to kgateway v2.2.0's test/translator package by
// github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kgateway:
// it runs the translator harness kgateway's golden tests use (TestCase.Run, as
// gateway_translator_test.go's TestTranslation calls it) on each input file named in
// KGW_ORACLE_INPUTS and writes, next to each, <file>.json: per Gateway, the route
// configurations' virtual hosts and routes with the policies each merge unit came from
// (the merge.<Kind>.<group> filter metadata irtranslator/route.go writes) and a few
// applied values, and the statuses the golden files hold.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	envoycorev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoyroutev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	apisettings "github.com/kgateway-dev/kgateway/v2/api/settings"
)

type oracleRoute struct {
	Name    string                         `json:"name"`
	Prefix  string                         `json:"prefix,omitempty"`
	Path    string                         `json:"path,omitempty"`
	Regex   string                         `json:"regex,omitempty"`
	Origins map[string]map[string][]string `json:"origins,omitempty"`
	Timeout string                         `json:"timeout,omitempty"`
	Retries *uint32                        `json:"retries,omitempty"`
	Direct  bool                           `json:"direct,omitempty"`
}

type oracleVhost struct {
	Name    string                         `json:"name"`
	Domains []string                       `json:"domains"`
	Origins map[string]map[string][]string `json:"origins,omitempty"`
	Retries *uint32                        `json:"retries,omitempty"`
	Routes  []oracleRoute                  `json:"routes"`
}

type oracleRouteConfig struct {
	Name         string                         `json:"name"`
	Origins      map[string]map[string][]string `json:"origins,omitempty"`
	VirtualHosts []oracleVhost                  `json:"virtualHosts"`
}

type oracleGateway struct {
	Namespace    string              `json:"namespace"`
	Name         string              `json:"name"`
	RouteConfigs []oracleRouteConfig `json:"routeConfigs"`
	Listeners    []oracleListener    `json:"listeners,omitempty"`
	Clusters     []oracleCluster     `json:"clusters,omitempty"`
}

type oracleOutput struct {
	Gateways []oracleGateway `json:"gateways"`
	Statuses *Statuses       `json:"statuses,omitempty"`
}

func TestEffectivePolicyOracle(t *testing.T) {
	inputs := os.Getenv("KGW_ORACLE_INPUTS")
	if inputs == "" {
		t.Skip("KGW_ORACLE_INPUTS names no input")
	}
	for _, in := range strings.Split(inputs, ":") {
		t.Run(filepath.Base(in), func(t *testing.T) {
			out, err := oracleRun(t, in)
			if err != nil {
				t.Fatalf("%s: %v", in, err)
			}
			b, err := json.Marshal(out)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(in+".json", b, 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func oracleRun(t *testing.T, in string) (*oracleOutput, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// As gateway_translator_test.go's TestBasic runs every golden case.
	experimental := func(s *apisettings.Settings) { s.EnableExperimentalGatewayAPIFeatures = true }
	results, err := TestCase{InputFiles: []string{in}}.Run(t, ctx, NewScheme(nil), ExtraConfig{}, experimental)
	if err != nil {
		return nil, err
	}
	out := &oracleOutput{}
	var statuses *Statuses
	for nn, res := range results {
		gw := oracleGateway{Namespace: nn.Namespace, Name: nn.Name}
		if res.Proxy != nil {
			for _, rc := range res.Proxy.Routes {
				gw.RouteConfigs = append(gw.RouteConfigs, oracleRouteConfigOf(rc))
			}
			for _, l := range res.Proxy.Listeners {
				gw.Listeners = append(gw.Listeners, oracleListenerOf(l))
			}
			sort.Slice(gw.Listeners, func(i, j int) bool { return gw.Listeners[i].Name < gw.Listeners[j].Name })
		}
		sort.Slice(gw.RouteConfigs, func(i, j int) bool { return gw.RouteConfigs[i].Name < gw.RouteConfigs[j].Name })
		gw.Clusters = oracleClustersOf(res.Clusters)
		out.Gateways = append(out.Gateways, gw)
		// Each gateway's reports cover only its own translation: gather the policies' statuses
		// of all of them.
		s := buildStatusesFromReports(res.ReportsMap, res.Gateways, res.ListenerSets)
		if statuses == nil {
			statuses = s
		} else if s != nil {
			for k, v := range s.Policies {
				if old, ok := statuses.Policies[k]; ok && old != nil && v != nil {
					old.Ancestors = append(old.Ancestors, v.Ancestors...)
					continue
				}
				if statuses.Policies == nil {
					statuses.Policies = map[string]*gwv1.PolicyStatus{}
				}
				statuses.Policies[k] = v
			}
		}
	}
	sort.Slice(out.Gateways, func(i, j int) bool {
		a, b := out.Gateways[i], out.Gateways[j]
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	out.Statuses = statuses
	return out, nil
}

func oracleRouteConfigOf(rc *envoyroutev3.RouteConfiguration) oracleRouteConfig {
	out := oracleRouteConfig{Name: rc.GetName(), Origins: oracleOrigins(rc.GetMetadata())}
	for _, vh := range rc.GetVirtualHosts() {
		ov := oracleVhost{Name: vh.GetName(), Domains: vh.GetDomains(), Origins: oracleOrigins(vh.GetMetadata())}
		if rp := vh.GetRetryPolicy(); rp != nil {
			n := rp.GetNumRetries().GetValue()
			ov.Retries = &n
		}
		for _, r := range vh.GetRoutes() {
			or := oracleRoute{Name: r.GetName(), Origins: oracleOrigins(r.GetMetadata())}
			m := r.GetMatch()
			or.Prefix, or.Path = m.GetPrefix(), m.GetPath()
			if m.GetPathSeparatedPrefix() != "" {
				or.Prefix = m.GetPathSeparatedPrefix()
			}
			if re := m.GetSafeRegex(); re != nil {
				or.Regex = re.GetRegex()
			}
			if a := r.GetRoute(); a != nil {
				if a.GetTimeout() != nil {
					or.Timeout = a.GetTimeout().AsDuration().String()
				}
				if rp := a.GetRetryPolicy(); rp != nil {
					n := rp.GetNumRetries().GetValue()
					or.Retries = &n
				}
			} else {
				or.Direct = true
			}
			ov.Routes = append(ov.Routes, or)
		}
		out.VirtualHosts = append(out.VirtualHosts, ov)
	}
	return out
}

// oracleOrigins reads the merge.<Kind>.<group> filter metadata: per policy kind, per merge
// unit, the policies ("<group>/<Kind>/<namespace>/<name>") it came from.
func oracleOrigins(md *envoycorev3.Metadata) map[string]map[string][]string {
	var out map[string]map[string][]string
	for key, st := range md.GetFilterMetadata() {
		kind, ok := strings.CutPrefix(key, "merge.")
		if !ok {
			continue
		}
		units := map[string][]string{}
		for unit, v := range st.GetFields() {
			for _, ref := range v.GetListValue().GetValues() {
				units[unit] = append(units[unit], ref.GetStringValue())
			}
			sort.Strings(units[unit])
		}
		if out == nil {
			out = map[string]map[string][]string{}
		}
		out[kind] = units
	}
	return out
}
