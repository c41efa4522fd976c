package live

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestOptionsFlags(t *testing.T) {
	desc := filepath.Join(t.TempDir(), "descriptors.yaml")
	if err := os.WriteFile(desc, []byte(`apiVersion: effectivepolicy.dev/v1alpha1
kind: PolicyDescriptorList
descriptors:
- {group: example.com, kind: RetryPolicy, class: Inherited, targetRefs: [spec.targetRefs]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr bool
		check   func(*Options) bool
	}{
		{"defaults", nil, false, func(o *Options) bool {
			return o.CacheDir == "/var/cache/effectivepolicy" && o.DefaultInheritedStrategy == "Atomic" && o.RecomputeDebounce == 20*time.Millisecond
		}},
		{"all flags", []string{"--cache-dir=/tmp/x", "--policy-descriptors=" + desc, "--default-inherited-strategy=Patch", "--recompute-debounce=5ms"}, false, func(o *Options) bool {
			return o.CacheDir == "/tmp/x" && o.PolicyDescriptors == desc && o.DefaultInheritedStrategy == "Patch" && o.RecomputeDebounce == 5*time.Millisecond
		}},
		{"empty cache dir", []string{"--cache-dir="}, false, func(o *Options) bool { return o.CacheDir == "" }},
		{"bad strategy", []string{"--default-inherited-strategy=patch"}, true, nil},
		{"negative debounce", []string{"--recompute-debounce=-1s"}, true, nil},
		{"missing descriptor file", []string{"--policy-descriptors=/does/not/exist"}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			errs := o.Validate()
			if (len(errs) > 0) != tt.wantErr {
				t.Fatalf("Validate() = %v, wantErr %v", errs, tt.wantErr)
			}
			if tt.check != nil && !tt.check(o) {
				t.Errorf("options = %+v", o)
			}
		})
	}
	for _, f := range []string{"cache-dir", "policy-descriptors", "default-inherited-strategy", "recompute-debounce"} {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		NewOptions().AddFlags(fs)
		if fl := fs.Lookup(f); fl == nil || fl.Usage == "" {
			t.Errorf("flag --%s missing or undocumented", f)
		}
	}
}
