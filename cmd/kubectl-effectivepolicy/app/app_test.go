package app

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	k8stesting "k8s.io/client-go/testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned/fake"
)

// TestErrors: what the plugin refuses, and what it says.
func TestErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no policy reaches the target", with(demo, "describe", "httproute/nope", "-n", "baker"), "no policy reaches HTTPRoute baker/nope"},
		{"a target of another kind", with(demo, "describe", "gateway/baker", "-n", "baker"), "no policy reaches Gateway baker/baker"},
		{"no such policy", with(demo, "reach", "retrypolicy/nope", "-n", "baker"), "no RetryPolicy baker/nope"},
		{"a policy of another kind", with(demo, "reach", "timeoutpolicy/retry-all", "-n", "baker"), "no TimeoutPolicy baker/retry-all"},
		{"no kind", with(demo, "describe"), "name a kind and an object"},
		{"not KIND/NAME", with(demo, "describe", "httproute/"), `"httproute/" is not KIND/NAME`},
		{"more after KIND/NAME", with(demo, "describe", "httproute/baker", "frosting"), "give KIND/NAME alone"},
		{"-A with a name", with(demo, "reach", "retrypolicy/retry-all", "-A"), "give POLICYKIND alone"},
		{"-f without --offline", []string{"describe", "httproute/baker", "-f", "../../../hack/demo"}, "-f reads manifests only with --offline"},
		{"--offline without -f", []string{"describe", "httproute/baker", "--offline"}, "--offline needs manifests"},
		{"bad output", with(demo, "describe", "httproute/baker", "-n", "baker", "-o", "wide"), "--output must be yaml, json or empty"},
		{"bad color", with(demo, "describe", "httproute/baker", "-n", "baker", "--color", "blue"), "--color must be auto, always or never"},
		{"trace without a host: the server's validation", with(demo, "trace", "--path", "/"), "spec.request.host: Required value"},
		{"trace of a path without /", with(demo, "trace", "--host", "a.example", "--path", "x"), `spec.request.path: Invalid value: "x"`},
		{"trace through a Gateway that does not exist", with(demo, "trace", "--host", "a.example", "--gateway", "infra/nope"), `spec.gateway: Not found: "infra/nope"`},
		{"a header without =", with(demo, "trace", "--host", "a.example", "--header", "x-env"), `--header "x-env": want NAME=VALUE`},
		{"missing manifests", []string{"describe", "httproute/baker", "--offline", "-f", "testdata/nope"}, "testdata/nope: no such file or directory"},
		{"ui on a port out of range", with(demo, "ui", "--port", "70000"), "--port must be between 0 and 65535"},
		{"ui with an argument", with(demo, "ui", "baker"), `unknown command "baker"`},
		{"bad strategy", with(demo, "describe", "httproute/baker", "--default-inherited-strategy", "Merge"), "--default-inherited-strategy must be Atomic or Patch"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := run(t, "", c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q (stdout %q)", err, c.want, out)
			}
		})
	}
}

// TestNothingListed: KIND alone that nothing matches is not an error.
func TestNothingListed(t *testing.T) {
	out, errOut, err := run(t, "", with(demo, "describe", "grpcroutes", "-A")...)
	if err != nil || out != "" || errOut != "No policy reaches any GRPCRoute in any namespace.\n" {
		t.Errorf("describe grpcroutes -A: %v, stdout %q, stderr %q", err, out, errOut)
	}
}

// TestStdin: -f - reads the manifests from standard input, and gives the
// same answer as the files.
func TestStdin(t *testing.T) {
	var all bytes.Buffer
	for _, f := range []string{"00-crds.yaml", "10-topology.yaml", "20-retry-all.yaml", "30-gateway.yaml", "40-route.yaml"} {
		data, err := os.ReadFile("../../../hack/demo/" + f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(data)
		all.WriteString("\n---\n")
	}
	got, _, err := run(t, all.String(), "describe", "httproute/baker", "-n", "baker", "--offline", "-f", "-")
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := run(t, "", with(demo, "describe", "httproute/baker", "-n", "baker")...)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("from standard input:\n%s\nfrom the files:\n%s", got, want)
	}
}

// TestOnlineMatchesOffline: the cluster's path (the generated clientset)
// prints what the offline path prints for the same objects: a fake
// clientset serves the objects the offline source computed, and answers
// RequestTraces as the offline source does.
func TestOnlineMatchesOffline(t *testing.T) {
	o := &Options{ConfigFlags: genericclioptions.NewConfigFlags(false), Offline: OfflineOptions{Enabled: true, Filenames: []string{"../../../hack/demo"}}}
	src, err := newOfflineSource(o)
	if err != nil {
		t.Fatal(err)
	}
	off := src.(*offlineSource)
	// Added with their resources named: NewSimpleClientset's guess of the
	// resource of a PolicyReach would be "policyreachs".
	client := fake.NewSimpleClientset()
	for _, k := range []struct{ resource, ns, name string }{
		{"effectivepolicies", "baker", "baker"}, {"effectivepolicies", "infra", "cupcakes"},
		{"clustereffectivepolicies", "", "baker"}, {"policyreaches", "baker", "retry-all"},
	} {
		get := off.EffectivePolicy
		if k.resource == "policyreaches" {
			get = off.PolicyReach
		}
		obj, err := get(t.Context(), k.ns, k.name)
		if err != nil {
			t.Fatal(err)
		}
		if err := client.Tracker().Create(v1alpha1.SchemeGroupVersion.WithResource(k.resource), obj, k.ns); err != nil {
			t.Fatal(err)
		}
	}
	client.PrependReactor("create", "requesttraces", func(a k8stesting.Action) (bool, runtime.Object, error) {
		rt := a.(k8stesting.CreateAction).GetObject().(*v1alpha1.RequestTrace)
		answer, err := off.Trace(t.Context(), rt)
		return true, answer, err
	})
	// The cluster's RESTMapper knows the demo's CRDs, as the offline table does.
	online := func(o *Options) (Source, error) {
		return &onlineSource{client: client, kinds: off.kinds, namespace: func() (string, error) { return *o.ConfigFlags.Namespace, nil }}, nil
	}
	for _, args := range [][]string{
		{"describe", "httproute/baker", "-n", "baker"},
		{"describe", "gateway/cupcakes", "-n", "infra", "-o", "yaml"},
		{"describe", "namespace/baker"},
		{"reach", "retrypolicies.demo.effectivepolicy.dev/retry-all", "-n", "baker"},
		{"trace", "--host", "baker.cupcakes.example"},
	} {
		want, _, err := run(t, "", with(demo, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		cmd := newCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, online)
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v online: %v\n%s", args, err, errOut.String())
		}
		if out.String() != want {
			t.Errorf("%v online:\n%s\noffline:\n%s", args, out.String(), want)
		}
	}
}

// TestFlagsDoNotShadowKubectls: a command's own flag of the same name as
// a persistent one (kubectl's --cluster, say) would silently take its place.
func TestFlagsDoNotShadowKubectls(t *testing.T) {
	root := NewCommand(genericiooptions.NewTestIOStreamsDiscard())
	for _, c := range root.Commands() {
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if root.PersistentFlags().Lookup(f.Name) != nil {
				t.Errorf("%s --%s shadows the root's flag", c.Name(), f.Name)
			}
			if f.Shorthand != "" && root.PersistentFlags().ShorthandLookup(f.Shorthand) != nil {
				t.Errorf("%s -%s shadows the root's flag", c.Name(), f.Shorthand)
			}
		})
	}
}
