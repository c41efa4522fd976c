// Package app holds the command line, options and start-up of
// effectivepolicy-apiserver.
package app

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/version"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apiserver"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/live"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/review"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/versioned"
)

func init() {
	utilruntime.Must(logsapi.AddFeatureGates(utilfeature.DefaultMutableFeatureGate))
}

// Options are the command line options of effectivepolicy-apiserver.
type Options struct {
	// RecommendedOptions are the generic aggregated API server options:
	// secure serving, delegated authentication and authorization, audit,
	// profiling / priority-and-fairness, --kubeconfig (CoreAPI), egress
	// selector, tracing. Etcd and admission are nil: nothing is written.
	RecommendedOptions *genericoptions.RecommendedOptions
	Logs               *logs.Options

	// WatchHistorySize is the number of watch events each resource keeps for
	// watches that resume from a resourceVersion.
	WatchHistorySize int

	// ShutdownDelay keeps serving for this long after SIGTERM while /readyz
	// already fails, so that the aggregator and Service endpoints stop
	// sending new requests before the listener closes.
	ShutdownDelay time.Duration

	// Live are the options of the live layer: informers, computation and
	// the bbolt cache (--cache-dir, --policy-descriptors, ...).
	Live *live.Options

	// ReviewMaxObjects and ReviewMaxBytes bound one EffectivePolicyReview;
	// MaxConcurrentReviews bounds those being answered at once
	// (docs/review.md, "Bounds").
	ReviewMaxObjects     int
	ReviewMaxBytes       int64
	MaxConcurrentReviews int
}

// DefaultMaxConcurrentReviews is the default of --max-concurrent-reviews:
// half the CPUs the server may use, at least one (registry.ReviewGate).
// Reviews take turns on the engine, so more in flight would compute no
// more; they would decode bodies and encode answers (up to ~15 MB each at
// scale 1) beside the one computing, on the CPUs readers need.
func DefaultMaxConcurrentReviews() int { return registry.DefaultMaxInFlightReviews() }

// NewOptions returns the default options.
func NewOptions() *Options {
	ro := genericoptions.NewRecommendedOptions("", apiserver.Codecs.LegacyCodec())
	// Read-only, computed resources: no etcd, no admission.
	ro.Etcd = nil
	ro.Admission = nil
	// API Priority and Fairness is off by default. The kube-apiserver already
	// applies it to every request before proxying to an aggregated server,
	// and all our requests are cheap reads from memory; enabling it here
	// would make readiness depend on the flowcontrol.apiserver.k8s.io objects
	// and need RBAC to read them. The max-in-flight limits apply instead.
	ro.Features.EnablePriorityAndFairness = false
	ro.SecureServing.BindPort = 8443
	ro.SecureServing.ServerCert.CertDirectory = "" // in-memory self-signed unless --cert-dir is given
	ro.SecureServing.ServerCert.PairName = "effectivepolicy-apiserver"
	// Every watch proxied by the aggregator is one HTTP/2 stream on the
	// aggregator's connection to us; the Go default (250) would cap watchers.
	ro.SecureServing.HTTP2MaxStreamsPerConnection = 1000
	return &Options{
		RecommendedOptions: ro,
		Logs:               logs.NewOptions(),
		WatchHistorySize:   versioned.DefaultHistorySize,
		Live:               live.NewOptions(),

		ReviewMaxObjects:     review.DefaultMaxObjects,
		ReviewMaxBytes:       review.DefaultMaxBytes,
		MaxConcurrentReviews: DefaultMaxConcurrentReviews(),
	}
}

// Flags returns the flags, grouped in sections for --help.
func (o *Options) Flags() cliflag.NamedFlagSets {
	var fss cliflag.NamedFlagSets
	ro := o.RecommendedOptions
	ro.SecureServing.AddFlags(fss.FlagSet("secure serving"))
	ro.Authentication.AddFlags(fss.FlagSet("authentication"))
	ro.Authorization.AddFlags(fss.FlagSet("authorization"))
	ro.CoreAPI.AddFlags(fss.FlagSet("kubernetes client"))
	ro.Audit.AddFlags(fss.FlagSet("auditing"))
	ro.Features.AddFlags(fss.FlagSet("features"))
	ro.EgressSelector.AddFlags(fss.FlagSet("egress selector"))
	ro.Traces.AddFlags(fss.FlagSet("traces"))
	utilfeature.DefaultMutableFeatureGate.AddFlag(fss.FlagSet("features"))
	logsapi.AddFlags(o.Logs, fss.FlagSet("logging"))

	fs := fss.FlagSet("effectivepolicy")
	fs.IntVar(&o.WatchHistorySize, "watch-history-size", o.WatchHistorySize,
		"Number of watch events kept per resource for watches that resume from a resourceVersion; older ones get 410 Gone.")
	fs.DurationVar(&o.ShutdownDelay, "shutdown-delay-duration", o.ShutdownDelay,
		"Time to keep serving after SIGTERM while /readyz reports failure, so load balancers and the aggregator stop routing here first.")
	o.Live.AddFlags(fs)
	fs.IntVar(&o.ReviewMaxObjects, "review-max-objects", o.ReviewMaxObjects,
		"Most objects (to apply and to delete) one EffectivePolicyReview may propose; more are refused (422).")
	fs.Int64Var(&o.ReviewMaxBytes, "review-max-bytes", o.ReviewMaxBytes,
		"Most bytes of JSON of the objects one EffectivePolicyReview may apply; more are refused (413). "+
			"The request body limit grows with it beyond 1 MiB.")
	fs.IntVar(&o.MaxConcurrentReviews, "max-concurrent-reviews", o.MaxConcurrentReviews,
		"Most EffectivePolicyReviews answered at once (they take turns on the engine); one more is refused with 429 "+
			"and a Retry-After of --review-timeout before its body is read. Default: half the CPUs (GOMAXPROCS), at least 1.")
	return fss
}

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	ro := o.RecommendedOptions
	errs = append(errs, ro.SecureServing.Validate()...)
	errs = append(errs, ro.Authentication.Validate()...)
	errs = append(errs, ro.Authorization.Validate()...)
	errs = append(errs, ro.Audit.Validate()...)
	errs = append(errs, ro.Features.Validate()...)
	errs = append(errs, ro.CoreAPI.Validate()...)
	errs = append(errs, ro.EgressSelector.Validate()...)
	errs = append(errs, ro.Traces.Validate()...)
	if o.WatchHistorySize <= 0 {
		errs = append(errs, fmt.Errorf("--watch-history-size must be positive"))
	}
	if o.ShutdownDelay < 0 {
		errs = append(errs, fmt.Errorf("--shutdown-delay-duration must not be negative"))
	}
	errs = append(errs, o.Live.Validate()...)
	if o.ReviewMaxObjects <= 0 {
		errs = append(errs, fmt.Errorf("--review-max-objects must be positive, not %d", o.ReviewMaxObjects))
	}
	if o.ReviewMaxBytes <= 0 {
		errs = append(errs, fmt.Errorf("--review-max-bytes must be positive, not %d", o.ReviewMaxBytes))
	}
	if o.MaxConcurrentReviews <= 0 {
		errs = append(errs, fmt.Errorf("--max-concurrent-reviews must be positive, not %d", o.MaxConcurrentReviews))
	}
	return utilerrors.NewAggregate(errs)
}

// MaxRequestBodyBytes bounds the body of a create (the generic default is
// 3 MiB), unless --review-max-bytes asks for more (RequestBodyLimit).
const MaxRequestBodyBytes = 1 << 20

// reviewEnvelopeBytes is room in a review's body beyond the objects it
// applies: its deletes (at most --review-max-objects of ~150 bytes) and
// its own fields.
const reviewEnvelopeBytes = 128 << 10

// RequestBodyLimit is the largest request body the server reads: 1 MiB, or
// what a review of --review-max-bytes needs, if more.
func (o *Options) RequestBodyLimit() int64 {
	return max(MaxRequestBodyBytes, o.ReviewMaxBytes+reviewEnvelopeBytes)
}

// GenericConfig applies the generic options to a fresh server config.
func (o *Options) GenericConfig() (*apiserver.Config, error) {
	ro := o.RecommendedOptions
	if err := ro.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("creating self-signed certificates: %w", err)
	}
	generic := apiserver.NewRecommendedConfig()
	if err := ro.ApplyTo(generic); err != nil {
		return nil, err
	}
	generic.ShutdownDelayDuration = o.ShutdownDelay
	// The only writes this server takes are the create-only RequestTrace
	// and EffectivePolicyReview. A trace's request is bounded well below
	// this (validation.ValidateRequestTrace); a larger body is refused with
	// 413 before it is decoded.
	generic.MaxRequestBodyBytes = o.RequestBodyLimit()
	return &apiserver.Config{GenericConfig: generic, ReviewLimits: registry.ReviewLimits{
		Limits:      review.Limits{MaxObjects: o.ReviewMaxObjects, MaxBytes: o.ReviewMaxBytes},
		MaxInFlight: o.MaxConcurrentReviews,
		RetryAfter:  o.Live.ReviewTimeout,
	}}, nil
}

// Config returns the complete server configuration, backends included.
func (o *Options) Config() (*apiserver.Config, error) {
	c, err := o.GenericConfig()
	if err != nil {
		return nil, err
	}
	if err := o.buildBackends(c); err != nil {
		return nil, err
	}
	return c, nil
}

// buildBackends is THE place where the registry backends of the two resources,
// their readyz checks and post-start hooks are built: the live layer watches
// the cluster through c.GenericConfig.ClientConfig (from --kubeconfig, or
// in-cluster), restores its bbolt cache at once, and starts its informers and
// computation in a post-start hook. /readyz holds until its first full
// computation is done.
func (o *Options) buildBackends(c *apiserver.Config) error {
	o.Live.WatchHistorySize = o.WatchHistorySize
	l, err := o.Live.New(c.GenericConfig.ClientConfig)
	if err != nil {
		return err
	}
	c.EffectivePolicies = l.EffectivePolicies()
	c.ClusterEffectivePolicies = l.ClusterEffectivePolicies()
	c.PolicyReaches = l.PolicyReaches()
	c.ClusterPolicyReaches = l.ClusterPolicyReaches()
	c.RequestTraces = l.Answers()
	c.Reviews = l.Answers()
	// Descriptor sensitiveFields: redacted for callers the authorizer does
	// not allow to get the policy kind (docs/reliability.md).
	c.SensitiveFields = l.SensitiveFields()
	c.ReadyzChecks = append(c.ReadyzChecks, l.ReadyCheck(), l.CacheCheck())
	if c.PostStartHooks == nil {
		c.PostStartHooks = map[string]genericapiserver.PostStartHookFunc{}
	}
	c.PostStartHooks["effectivepolicy-live"] = func(ctx genericapiserver.PostStartHookContext) error {
		go func() {
			if err := l.Run(ctx); err != nil && ctx.Err() == nil {
				klog.ErrorS(err, "Live layer stopped")
			}
		}()
		return nil
	}
	return nil
}

// Run starts the server and blocks until ctx is done.
func (o *Options) Run(ctx context.Context) error {
	c, err := o.Config()
	if err != nil {
		return err
	}
	s, err := c.Complete().New()
	if err != nil {
		return err
	}
	return s.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}

// NewCommand returns the effectivepolicy-apiserver command.
func NewCommand(ctx context.Context) *cobra.Command {
	o := NewOptions()
	var printVersion bool
	cmd := &cobra.Command{
		Use:   "effectivepolicy-apiserver",
		Short: "Aggregated API server for the effective Gateway API policies of each object",
		Long: `effectivepolicy-apiserver serves the effectivepolicy.dev/v1alpha1 API: which
Gateway API policies (GEP-713) reach an object and what they add up to.

Read-only (get, list, watch):
  effectivepolicies, clustereffectivepolicies   the policies that reach each object
  policyreaches, clusterpolicyreaches           the objects each policy reaches

Create only (answered in the status, nothing stored):
  requesttraces            what a Gateway does with a request, and its policies
  effectivepolicyreviews   what a proposed change would do to the effective policies`,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if printVersion {
				fmt.Fprintln(cmd.OutOrStdout(), "effectivepolicy-apiserver", version.Get())
				return nil
			}
			if len(args) > 0 {
				return fmt.Errorf("unexpected arguments: %q", args)
			}
			if err := logsapi.ValidateAndApply(o.Logs, utilfeature.DefaultFeatureGate); err != nil {
				return err
			}
			cliflag.PrintFlags(cmd.Flags())
			if err := o.Validate(); err != nil {
				return err
			}
			klog.InfoS("Starting effectivepolicy-apiserver")
			return o.Run(ctx)
		},
	}
	fs := cmd.Flags()
	fss := o.Flags()
	fss.FlagSet("generic").BoolVar(&printVersion, "version", false, "Print the version, commit and build date, and exit.")
	for _, f := range fss.FlagSets {
		fs.AddFlagSet(f)
	}
	cliflag.SetUsageAndHelpFunc(cmd, fss, 0)
	return cmd
}
