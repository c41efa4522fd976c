package controllers

// The reading of the Kuadrant oracle's input (see zz_oracle_harness_test.go): decoding into
// kuadrant-operator's types and the few things the API server or a gateway would have added.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/kuadrant/policy-machinery/controller"
	"github.com/kuadrant/policy-machinery/machinery"
	"github.com/samber/lo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	kuadrantv1 "github.com/kuadrant/kuadrant-operator/api/v1"
	kuadrantv1alpha1 "github.com/kuadrant/kuadrant-operator/api/v1alpha1"
	kuadrantv1beta1 "github.com/kuadrant/kuadrant-operator/api/v1beta1"
)

// decode reads a multi-document YAML (or JSON) stream into typed objects. Kinds kuadrant-operator
// v1.5.2 does not watch or that play no part here (Namespaces, Services, ListenerSets, TCPRoutes,
// Secrets, ...) are listed as ignored.
func decode(doc []byte) (*inputs, error) {
	in := &inputs{store: controller.Store{}}
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(doc), 4096)
	for i := 0; ; i++ {
		var raw map[string]any
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if raw == nil {
			continue
		}
		if err := add(in, raw); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
	}
	return in, nil
}

func add(in *inputs, raw map[string]any) error {
	apiVersion, _ := raw["apiVersion"].(string)
	kind, _ := raw["kind"].(string)
	group := strings.Split(apiVersion, "/")[0]
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	obj, gv := newObject(group, kind)
	md, _ := raw["metadata"].(map[string]any)
	if obj == nil {
		in.ignored = append(in.ignored, fmt.Sprintf("%s %v/%v", kind, md["namespace"], md["name"]))
		return nil
	}
	raw["apiVersion"] = gv
	b, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, obj); err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	if obj.GetName() == "" {
		return fmt.Errorf("%s without metadata.name", kind)
	}
	if obj.GetUID() == "" {
		obj.SetUID(types.UID(group + "/" + kind + "/" + obj.GetNamespace() + "/" + obj.GetName()))
	}
	in.store[string(obj.GetUID())] = obj
	return nil
}

// newObject returns an empty typed object of a kind kuadrant-operator v1.5.2 watches, and the
// group/version it is stored at (gateway-api v1.2.1 serves all four Gateway API kinds at v1).
func newObject(group, kind string) (controller.Object, string) {
	switch group + "/" + kind {
	case "gateway.networking.k8s.io/GatewayClass":
		return &gwapiv1.GatewayClass{}, gwapiv1.GroupVersion.String()
	case "gateway.networking.k8s.io/Gateway":
		return &gwapiv1.Gateway{}, gwapiv1.GroupVersion.String()
	case "gateway.networking.k8s.io/HTTPRoute":
		return &gwapiv1.HTTPRoute{}, gwapiv1.GroupVersion.String()
	case "gateway.networking.k8s.io/GRPCRoute":
		return &gwapiv1.GRPCRoute{}, gwapiv1.GroupVersion.String()
	case "kuadrant.io/RateLimitPolicy":
		return &kuadrantv1.RateLimitPolicy{}, kuadrantv1.GroupVersion.String()
	case "kuadrant.io/AuthPolicy":
		return &kuadrantv1.AuthPolicy{}, kuadrantv1.GroupVersion.String()
	case "kuadrant.io/DNSPolicy":
		return &kuadrantv1.DNSPolicy{}, kuadrantv1.GroupVersion.String()
	case "kuadrant.io/TLSPolicy":
		return &kuadrantv1.TLSPolicy{}, kuadrantv1.GroupVersion.String()
	case "kuadrant.io/TokenRateLimitPolicy":
		return &kuadrantv1alpha1.TokenRateLimitPolicy{}, kuadrantv1alpha1.GroupVersion.String()
	case "kuadrant.io/Kuadrant":
		return &kuadrantv1beta1.Kuadrant{}, kuadrantv1beta1.GroupVersion.String()
	case "cert-manager.io/Issuer":
		return &certmanagerv1.Issuer{}, certmanagerv1.SchemeGroupVersion.String()
	case "cert-manager.io/ClusterIssuer":
		return &certmanagerv1.ClusterIssuer{}, certmanagerv1.SchemeGroupVersion.String()
	}
	return nil, ""
}

// ensureKuadrant adds the Kuadrant object kuadrant-operator needs before it computes anything (it
// links every GatewayClass to it), unless the input has one.
func ensureKuadrant(in *inputs) {
	if len(in.store.FilterByGroupKind(kuadrantv1beta1.KuadrantGroupKind)) > 0 {
		return
	}
	k := &kuadrantv1beta1.Kuadrant{
		TypeMeta:   metav1.TypeMeta{APIVersion: kuadrantv1beta1.GroupVersion.String(), Kind: "Kuadrant"},
		ObjectMeta: metav1.ObjectMeta{Name: "kuadrant", Namespace: "kuadrant-system", UID: "oracle-kuadrant"},
	}
	in.store[string(k.UID)] = k
}

// assumeProgrammed gives every listener without a status a Programmed listener status, and every
// route parentRef without a status an Accepted parent status from its Gateway's controller, as a
// gateway provider that accepts everything would. Kuadrant's effective policies do not read them;
// its Enforced condition skips paths through listeners and routes that are not ready.
func assumeProgrammed(store controller.Store) {
	classes := map[string]gwapiv1.GatewayController{}
	for _, o := range store.FilterByGroupKind(machinery.GatewayClassGroupKind) {
		c := o.(*gwapiv1.GatewayClass)
		classes[c.Name] = c.Spec.ControllerName
	}
	gateways := map[string]gwapiv1.GatewayController{}
	ready := []metav1.Condition{{Type: "Programmed", Status: metav1.ConditionTrue, Reason: "Programmed"}, {Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted"}}
	for _, o := range store.FilterByGroupKind(machinery.GatewayGroupKind) {
		g := o.(*gwapiv1.Gateway)
		gateways[g.Namespace+"/"+g.Name] = classes[string(g.Spec.GatewayClassName)]
		for _, l := range g.Spec.Listeners {
			if !lo.ContainsBy(g.Status.Listeners, func(s gwapiv1.ListenerStatus) bool { return s.Name == l.Name }) {
				g.Status.Listeners = append(g.Status.Listeners, gwapiv1.ListenerStatus{Name: l.Name, Conditions: ready})
			}
		}
	}
	accept := func(ns string, spec *gwapiv1.CommonRouteSpec, status *gwapiv1.RouteStatus) {
		for _, ref := range spec.ParentRefs {
			key := string(ptr.Deref(ref.Namespace, gwapiv1.Namespace(ns))) + "/" + string(ref.Name)
			ctrl, ok := gateways[key]
			if !ok || lo.ContainsBy(status.Parents, func(s gwapiv1.RouteParentStatus) bool { return reflect.DeepEqual(s.ParentRef, ref) }) {
				continue
			}
			status.Parents = append(status.Parents, gwapiv1.RouteParentStatus{ParentRef: ref, ControllerName: ctrl, Conditions: ready[1:]})
		}
	}
	for _, o := range store.FilterByGroupKind(machinery.HTTPRouteGroupKind) {
		r := o.(*gwapiv1.HTTPRoute)
		accept(r.Namespace, &r.Spec.CommonRouteSpec, &r.Status.RouteStatus)
	}
	for _, o := range store.FilterByGroupKind(machinery.GRPCRouteGroupKind) {
		r := o.(*gwapiv1.GRPCRoute)
		accept(r.Namespace, &r.Spec.CommonRouteSpec, &r.Status.RouteStatus)
	}
}

// defaultListenerTLS applies the Gateway API CRD defaults of a listener's TLS block (mode
// Terminate; a certificateRef's group "" and kind Secret) where the input leaves them out, as the
// API server stores them: Kuadrant reads them without checking.
func defaultListenerTLS(store controller.Store) {
	for _, o := range store.FilterByGroupKind(machinery.GatewayGroupKind) {
		g := o.(*gwapiv1.Gateway)
		for i := range g.Spec.Listeners {
			tls := g.Spec.Listeners[i].TLS
			if tls == nil {
				continue
			}
			if tls.Mode == nil {
				tls.Mode = ptr.To(gwapiv1.TLSModeTerminate)
			}
			for j := range tls.CertificateRefs {
				ref := &tls.CertificateRefs[j]
				if ref.Group == nil {
					ref.Group = ptr.To(gwapiv1.Group(""))
				}
				if ref.Kind == nil {
					ref.Kind = ptr.To(gwapiv1.Kind("Secret"))
				}
			}
		}
	}
}
