package live

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// Options configure the live layer. The zero value is not useful; start from
// NewOptions.
type Options struct {
	// CacheDir holds the bbolt output cache (file effectivepolicy.db). Empty
	// disables persistence.
	CacheDir string
	// PolicyDescriptors is a descriptor file loaded on top of the built-ins.
	PolicyDescriptors string
	// DefaultInheritedStrategy is "Atomic" or "Patch".
	DefaultInheritedStrategy string
	// RecomputeDebounce is how long the background worker waits after the
	// first change before recomputing, to batch bursts of input events.
	RecomputeDebounce time.Duration
	// WatchHistorySize is the number of watch events each resource keeps for
	// watches that resume from a resourceVersion (no flag; 0 = default).
	WatchHistorySize int
	// ReviewTimeout bounds how long an EffectivePolicyReview may hold the
	// engine, and so how long live edits wait for one.
	ReviewTimeout time.Duration
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		CacheDir:                 "/var/cache/effectivepolicy",
		DefaultInheritedStrategy: "Atomic",
		RecomputeDebounce:        20 * time.Millisecond,
		ReviewTimeout:            time.Second,
	}
}

// AddFlags adds the live-layer flags to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.CacheDir, "cache-dir", o.CacheDir,
		"Directory of the bbolt cache of computed EffectivePolicies (file effectivepolicy.db), so that a restarted server "+
			"serves the same objects and resourceVersions at once. A corrupt or foreign file is moved aside and rebuilt. "+
			"If the directory is not writable the server runs from memory and says so in its logs and metrics. Empty disables the cache.")
	fs.StringVar(&o.PolicyDescriptors, "policy-descriptors", o.PolicyDescriptors,
		"Path of a policy descriptor file (see docs/storage.md) describing policy kinds, on top of the built-in descriptors; "+
			"a descriptor wins over a built-in one and over the gateway.networking.k8s.io/policy CRD label.")
	fs.StringVar(&o.DefaultInheritedStrategy, "default-inherited-strategy", o.DefaultInheritedStrategy,
		"Merge strategy of inherited policies that name none: Atomic (AtomicDefaults/AtomicOverrides) or Patch (PatchDefaults/PatchOverrides).")
	fs.DurationVar(&o.RecomputeDebounce, "recompute-debounce", o.RecomputeDebounce,
		"How long to wait after an input change before recomputing the affected EffectivePolicies, to batch bursts of changes. "+
			"Reads of an affected object do not wait: they recompute it first.")
	fs.DurationVar(&o.ReviewTimeout, "review-timeout", o.ReviewTimeout,
		"Longest an EffectivePolicyReview may compute: live updates wait while one does. A larger change is refused (413); "+
			"review it offline (kubectl effectivepolicy diff --offline).")
}

// Validate checks the options.
func (o *Options) Validate() []error {
	var errs []error
	switch o.DefaultInheritedStrategy {
	case "Atomic", "Patch":
	default:
		errs = append(errs, fmt.Errorf("--default-inherited-strategy must be Atomic or Patch, not %q", o.DefaultInheritedStrategy))
	}
	if o.RecomputeDebounce < 0 || o.RecomputeDebounce > time.Minute {
		errs = append(errs, fmt.Errorf("--recompute-debounce must be between 0 and 1m, not %v", o.RecomputeDebounce))
	}
	if o.ReviewTimeout <= 0 || o.ReviewTimeout > time.Minute {
		errs = append(errs, fmt.Errorf("--review-timeout must be positive and at most 1m, not %v", o.ReviewTimeout))
	}
	if o.WatchHistorySize < 0 {
		errs = append(errs, fmt.Errorf("watch history size must not be negative"))
	}
	if o.PolicyDescriptors != "" {
		if _, err := o.descriptors(); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func (o *Options) descriptors() ([]compute.Descriptor, error) {
	if o.PolicyDescriptors == "" {
		return nil, nil
	}
	data, err := os.ReadFile(o.PolicyDescriptors)
	if err != nil {
		return nil, fmt.Errorf("--policy-descriptors: %w", err)
	}
	d, err := compute.LoadDescriptors(data)
	if err != nil {
		return nil, fmt.Errorf("--policy-descriptors %s: %w", o.PolicyDescriptors, err)
	}
	return d, nil
}

// NewEngine builds the computation engine the options describe.
func (o *Options) NewEngine() (*compute.Engine, error) {
	d, err := o.descriptors()
	if err != nil {
		return nil, err
	}
	return compute.NewEngine(compute.Options{Descriptors: d, DefaultInheritedStrategy: o.DefaultInheritedStrategy})
}

// New builds the live layer for the cluster cfg points at. Start it with Run.
func (o *Options) New(cfg *rest.Config) (*Live, error) {
	if cfg == nil {
		return nil, fmt.Errorf("no Kubernetes client configuration (--kubeconfig or in-cluster) to read the cluster with")
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return o.NewForClient(client)
}

// NewForClient is New with a ready dynamic client.
func (o *Options) NewForClient(client dynamic.Interface) (*Live, error) {
	engine, err := o.NewEngine()
	if err != nil {
		return nil, err
	}
	return NewWithEngine(o, engine, client)
}
