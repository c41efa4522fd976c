package kgateway

import (
	"strconv"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// TestPerPortOriginsClass: the class matches the disagreements kgateway's
// oracle gave on seeds 22 and 48 (as the run printed them) and refuses near
// misses: theirs not the oldest policy with the port, ours naming a policy
// without the port or leaving theirs out, another field.
func TestPerPortOriginsClass(t *testing.T) {
	f := differential.OracleNamed("kgateway").Features()
	check := func(seed uint64, gw string, port int, theirs, ours string) differential.Check {
		ns := "df" + itoa(seed) + "-a"
		return differential.Check{Kind: gen.LP, Field: "/perPort[port=" + itoa(uint64(port)) + "]", Theirs: ns + "/" + theirs, Ours: ours,
			Target: differential.Node{Kind: "Gateway", Namespace: ns, Name: gw, Section: "l1"}}
	}
	for _, tc := range []struct {
		name string
		seed uint64
		c    differential.Check
		want bool
	}{
		{"seed 22", 22, check(22, "gw1", 8000, "p04-lp", "df22-a/p04-lp,df22-a/p06-lp"), true},
		{"seed 48", 48, check(48, "gw1", 8001, "p10-lp", "df48-a/p10-lp,df48-a/p11-lp,df48-a/p12-lp"), true},
		{"theirs not the oldest", 22, check(22, "gw1", 8000, "p06-lp", "df22-a/p04-lp,df22-a/p06-lp"), false},
		{"ours leaves theirs out", 48, check(48, "gw1", 8001, "p10-lp", "df48-a/p11-lp,df48-a/p12-lp"), false},
		{"ours names a policy without the port", 22, check(22, "gw1", 8000, "p04-lp", "df22-a/p04-lp,df22-a/p99-lp"), false},
		{"another port", 22, check(22, "gw1", 8001, "p04-lp", "df22-a/p04-lp,df22-a/p06-lp"), false},
		{"agreement", 22, check(22, "gw1", 8000, "p04-lp", "df22-a/p04-lp"), false},
		{"another field", 22, func() differential.Check {
			c := check(22, "gw1", 8000, "p04-lp", "df22-a/p04-lp,df22-a/p06-lp")
			c.Field = "/default/perConnectionBufferLimitBytes"
			return c
		}(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := gen.Generate(tc.seed, f).Objects()
			if got := kgPerPortOrigins(tc.c, objs); got != tc.want {
				t.Errorf("kgPerPortOrigins(%s) = %v, want %v", tc.c, got, tc.want)
			}
		})
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
