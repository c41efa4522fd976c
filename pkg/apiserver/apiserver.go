package apiserver

import (
	"fmt"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/util/compatibility"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	generatedopenapi "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/openapi"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/httpgzip"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/review"
)

var (
	// Scheme holds the served types and the meta types the API machinery needs.
	Scheme = runtime.NewScheme()
	// Codecs serializes the served types.
	Codecs = serializer.NewCodecFactory(Scheme)
)

func init() {
	utilruntime.Must(v1alpha1.AddToScheme(Scheme))
	utilruntime.Must(Scheme.SetVersionPriority(v1alpha1.SchemeGroupVersion))
	// Discovery, Status, WatchEvent and the options types, as every API server registers them.
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	Scheme.AddUnversionedTypes(unversioned,
		&metav1.Status{},
		&metav1.APIVersions{},
		&metav1.APIGroupList{},
		&metav1.APIGroup{},
		&metav1.APIResourceList{},
	)
}

// NewRecommendedConfig returns a generic server config for this API: codecs,
// OpenAPI v2 and v3 from the generated definitions, and the effective
// (Kubernetes) version of the library build. Options are applied to it
// afterwards (the authentication options need the OpenAPI config in place).
func NewRecommendedConfig() *genericapiserver.RecommendedConfig {
	c := genericapiserver.NewRecommendedConfig(Codecs)
	c.EffectiveVersion = compatibility.DefaultBuildEffectiveVersion()

	namer := openapinamer.NewDefinitionNamer(Scheme)
	c.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(generatedopenapi.GetOpenAPIDefinitions, namer)
	c.OpenAPIConfig.Info.Title = "EffectivePolicy"
	c.OpenAPIConfig.Info.Version = v1alpha1.SchemeGroupVersion.Version
	c.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	c.OpenAPIV3Config.Info.Title = "EffectivePolicy"
	c.OpenAPIV3Config.Info.Version = v1alpha1.SchemeGroupVersion.Version
	// Large responses (a LIST of every EffectivePolicy is hundreds of MB)
	// are gzipped on every core rather than on the API server's one.
	c.BuildHandlerChainFunc = chain(nil)
	return c
}

// chain builds the server's handler chain: the generic one, gzipping large
// responses on every core, with the review gate (nil: none) in front of the
// API handler, where the request is authorized and its body not yet read,
// and every request's CPU labeled by its kind (RequestLabel).
func chain(gate *registry.ReviewGate) func(http.Handler, *genericapiserver.Config) http.Handler {
	return func(h http.Handler, c *genericapiserver.Config) http.Handler {
		return withRequestLabels(httpgzip.WithParallelGzip(genericapiserver.DefaultBuildHandlerChain(gate.Wrap(h), c)))
	}
}

// Config is the configuration of the server: the generic config plus what the
// effectivepolicy.dev resources are served from.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig

	// EffectivePolicies backs the namespaced effectivepolicies resource.
	EffectivePolicies registry.Backend
	// ClusterEffectivePolicies backs the cluster-scoped clustereffectivepolicies resource.
	ClusterEffectivePolicies registry.Backend
	// PolicyReaches and ClusterPolicyReaches, when set, back policyreaches
	// and clusterpolicyreaches (docs/spec.md §8). Their targets are shown only in
	// namespaces where GenericConfig.Authorization.Authorizer lets the
	// caller get effectivepolicies (access.ReachFilter).
	PolicyReaches, ClusterPolicyReaches registry.Backend
	// RequestTraces, when set, serves requesttraces (docs/spec.md §9): traces read
	// the Gateways from it and their policies from EffectivePolicies, as
	// the caller may see them.
	RequestTraces registry.TraceSource
	// Reviews, when set, serves effectivepolicyreviews (docs/spec.md §10): what a
	// proposed change would do, asked of the live engine.
	Reviews review.Source
	// ReviewLimits bound the reviews (their size, how many at once); the
	// zero value bounds nothing.
	ReviewLimits registry.ReviewLimits
	// SensitiveFields, when set, names the policy kinds whose descriptors
	// mark sensitive fields: get, list and watch then show those values only
	// to callers GenericConfig.Authorization.Authorizer allows to get the
	// policy kind in the source policy's namespace (access.Redactor). With
	// authorization disabled (no authorizer) nothing is redacted.
	SensitiveFields access.SensitiveFields
	// RedactionCacheTTL is how long such an access decision (and those of
	// the reach filter) is reused (0: access.DefaultCacheTTL).
	RedactionCacheTTL time.Duration
	// ReadyzChecks are added to /readyz (e.g. "informers synced and first
	// computation done").
	ReadyzChecks []healthz.HealthChecker
	// PostStartHooks are run once the server listens (e.g. to start informers).
	PostStartHooks map[string]genericapiserver.PostStartHookFunc
}

type completedConfig struct {
	GenericConfig genericapiserver.CompletedConfig
	cfg           *Config
}

// CompletedConfig is a Config with defaults filled in; build it with Complete.
type CompletedConfig struct {
	*completedConfig
}

// Server is the running effectivepolicy.dev API server.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
}

// Complete fills in defaults and adds the readyz checks to the generic config.
func (c *Config) Complete() CompletedConfig {
	if len(c.ReadyzChecks) > 0 {
		c.GenericConfig.AddReadyzChecks(c.ReadyzChecks...)
	}
	return CompletedConfig{&completedConfig{
		GenericConfig: c.GenericConfig.Complete(),
		cfg:           c,
	}}
}

// New returns a server that serves effectivepolicy.dev/v1alpha1.
func (c CompletedConfig) New() (*Server, error) {
	if c.cfg.EffectivePolicies == nil || c.cfg.ClusterEffectivePolicies == nil {
		return nil, fmt.Errorf("both registry backends must be set")
	}
	if c.cfg.Reviews != nil {
		c.GenericConfig.BuildHandlerChainFunc = chain(registry.NewReviewGate(c.cfg.ReviewLimits, Codecs))
	}
	generic, err := c.GenericConfig.New("effectivepolicy-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	s := &Server{GenericAPIServer: generic}

	// What depends on the caller (sensitive fields, reached targets): one
	// decision cache for every resource.
	var (
		opts     []registry.Option
		checker  *access.Checker
		redactor *access.Redactor
	)
	if authz := c.GenericConfig.Authorization.Authorizer; authz != nil {
		checker = access.NewChecker(authz, c.cfg.RedactionCacheTTL)
		if c.cfg.SensitiveFields != nil {
			redactor = access.NewRedactorWith(checker, c.cfg.SensitiveFields)
			opts = append(opts, registry.WithRedactor(redactor))
		}
		opts = append(opts, registry.WithReachFilter(access.NewReachFilter(checker)))
	}
	group := genericapiserver.NewDefaultAPIGroupInfo(effectivepolicy.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	storage := map[string]rest.Storage{
		"effectivepolicies":        registry.NewEffectivePolicyREST(c.cfg.EffectivePolicies, opts...),
		"clustereffectivepolicies": registry.NewClusterEffectivePolicyREST(c.cfg.ClusterEffectivePolicies, opts...),
	}
	if c.cfg.PolicyReaches != nil {
		storage["policyreaches"] = registry.NewPolicyReachREST(c.cfg.PolicyReaches, opts...)
	}
	if c.cfg.ClusterPolicyReaches != nil {
		storage["clusterpolicyreaches"] = registry.NewClusterPolicyReachREST(c.cfg.ClusterPolicyReaches, opts...)
	}
	if c.cfg.RequestTraces != nil {
		storage["requesttraces"] = registry.NewTraceREST(c.cfg.RequestTraces, c.cfg.EffectivePolicies, checker, redactor)
	}
	if c.cfg.Reviews != nil {
		storage["effectivepolicyreviews"] = registry.NewReviewREST(c.cfg.Reviews, checker, redactor).WithLimits(c.cfg.ReviewLimits.Limits)
	}
	group.VersionedResourcesStorageMap[v1alpha1.SchemeGroupVersion.Version] = storage
	if err := generic.InstallAPIGroup(&group); err != nil {
		return nil, err
	}
	for name, hook := range c.cfg.PostStartHooks {
		if err := generic.AddPostStartHook(name, hook); err != nil {
			return nil, err
		}
	}
	return s, nil
}
