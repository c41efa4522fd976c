package app

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/version"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/review"
)

func TestDefaults(t *testing.T) {
	o := NewOptions()
	ro := o.RecommendedOptions
	if ro.Features.EnablePriorityAndFairness {
		t.Error("priority and fairness should be off by default")
	}
	if ro.Etcd != nil || ro.Admission != nil {
		t.Error("no etcd, no admission")
	}
	if got := ro.SecureServing.HTTP2MaxStreamsPerConnection; got != 1000 {
		t.Errorf("HTTP/2 streams per connection = %d, want 1000 for proxied watches", got)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
		check   func(*Options) bool
	}{
		{args: []string{"--secure-port=9443", "--bind-address=127.0.0.1", "--cert-dir=/tmp/x",
			"--kubeconfig=k", "--authentication-kubeconfig=a", "--authorization-kubeconfig=z"},
			check: func(o *Options) bool {
				ro := o.RecommendedOptions
				return ro.SecureServing.BindPort == 9443 && ro.SecureServing.BindAddress.String() == "127.0.0.1" &&
					ro.SecureServing.ServerCert.CertDirectory == "/tmp/x" && ro.CoreAPI.CoreAPIKubeconfigPath == "k" &&
					ro.Authentication.RemoteKubeConfigFile == "a" && ro.Authorization.RemoteKubeConfigFile == "z"
			}},
		{args: []string{"--enable-priority-and-fairness=true"}, check: func(o *Options) bool {
			return o.RecommendedOptions.Features.EnablePriorityAndFairness
		}},
		{args: []string{"--watch-history-size=5"}, check: func(o *Options) bool { return o.WatchHistorySize == 5 }},
		{args: []string{"--watch-history-size=0"}, wantErr: "--watch-history-size"},
		{args: []string{"--etcd-servers=http://x"}, wantErr: "unknown flag"},
		{args: []string{"--shutdown-delay-duration=15s"}, check: func(o *Options) bool { return o.ShutdownDelay.Seconds() == 15 }},
		{args: []string{"--shutdown-delay-duration=-1s"}, wantErr: "--shutdown-delay-duration"},
		{args: []string{"--http2-max-streams-per-connection=2000"}, check: func(o *Options) bool {
			return o.RecommendedOptions.SecureServing.HTTP2MaxStreamsPerConnection == 2000
		}},
		{args: []string{"--cache-dir=/tmp/c", "--default-inherited-strategy=Patch"}, check: func(o *Options) bool {
			return o.Live.CacheDir == "/tmp/c" && o.Live.DefaultInheritedStrategy == "Patch"
		}},
		{args: []string{"--default-inherited-strategy=Sometimes"}, wantErr: "--default-inherited-strategy"},
		// The descriptor file the artifacts ship in their ConfigMap must not
		// keep the deployed server from starting.
		{args: []string{"--policy-descriptors=../../../artifacts/base/policy-descriptors.yaml"}, check: func(o *Options) bool {
			return o.Live.PolicyDescriptors != ""
		}},
		{args: []string{"--policy-descriptors=options_test.go"}, wantErr: "--policy-descriptors"},
		// The review bounds: defaults, set, refused when not positive; the
		// body limit follows --review-max-bytes above 1 MiB only.
		{args: nil, check: func(o *Options) bool {
			return o.ReviewMaxObjects == review.DefaultMaxObjects && o.ReviewMaxBytes == review.DefaultMaxBytes &&
				o.MaxConcurrentReviews == DefaultMaxConcurrentReviews() && o.RequestBodyLimit() == MaxRequestBodyBytes
		}},
		{args: []string{"--review-max-objects=20", "--review-max-bytes=4194304", "--max-concurrent-reviews=1"}, check: func(o *Options) bool {
			return o.ReviewMaxObjects == 20 && o.ReviewMaxBytes == 4<<20 && o.MaxConcurrentReviews == 1 &&
				o.RequestBodyLimit() == 4<<20+reviewEnvelopeBytes
		}},
		{args: []string{"--review-max-objects=0"}, wantErr: "--review-max-objects"},
		{args: []string{"--review-max-bytes=-1"}, wantErr: "--review-max-bytes"},
		{args: []string{"--max-concurrent-reviews=0"}, wantErr: "--max-concurrent-reviews"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			fs.SetOutput(io.Discard)
			for _, f := range o.Flags().FlagSets {
				fs.AddFlagSet(f)
			}
			err := fs.Parse(tc.args)
			if err == nil {
				err = o.Validate()
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(o) {
				t.Errorf("flags not applied: %+v", o)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	cmd := NewCommand(t.Context())
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Secure serving flags:", "--cert-dir", "--authentication-kubeconfig", "--kubeconfig",
		"--enable-priority-and-fairness", "--watch-history-size", "--feature-gates", "-v, --v",
		"--cache-dir", "--policy-descriptors", "--default-inherited-strategy", "--shutdown-delay-duration", "--version",
		"--review-max-objects", "--review-max-bytes", "--max-concurrent-reviews"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
	// Every resource the server serves is named, as a word of its own
	// (effectivepolicies is also in clustereffectivepolicies).
	for _, resource := range []string{"effectivepolicies", "clustereffectivepolicies", "policyreaches",
		"clusterpolicyreaches", "requesttraces", "effectivepolicyreviews"} {
		if !regexp.MustCompile(`\b` + resource + `\b`).MatchString(out.String()) {
			t.Errorf("help does not name %s", resource)
		}
	}
}

// --version prints the build and exits without validating or starting anything (no kubeconfig
// is given here: starting would fail).
func TestVersionFlag(t *testing.T) {
	cmd := NewCommand(t.Context())
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--version", "--cache-dir=/nonexistent/never/created"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	want := "effectivepolicy-apiserver " + version.Get().String() + "\n"
	if got != want {
		t.Errorf("--version printed %q, want %q", got, want)
	}
	if _, err := os.Stat("/nonexistent/never/created"); err == nil {
		t.Error("--version created the cache directory")
	}
}
