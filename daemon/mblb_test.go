package daemon

import (
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/objects"
)

func TestMBLBSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  map[string]string
		want func(*testing.T, mblb.Framing, bool)
		bad  bool
	}{
		{"rule by default", nil, func(t *testing.T, f mblb.Framing, retry bool) {
			if f.Mode != mblb.Rule || !retry {
				t.Errorf("%+v retry %v", f, retry)
			}
		}, false},
		{"length field", map[string]string{"framing": "length", "length-offset": "2", "length-size": "2",
			"length-byte-order": "little", "length-adjust": "-2", "length-includes-header": "enabled", "retry": "disabled"},
			func(t *testing.T, f mblb.Framing, retry bool) {
				want := mblb.LengthField{Offset: 2, Size: 2, LittleEndian: true, Adjust: -2, IncludesHeader: true}
				if f.Mode != mblb.Length || f.Length != want || retry {
					t.Errorf("%+v retry %v", f, retry)
				}
			}, false},
		{"delimiter escapes", map[string]string{"framing": "delimiter", "delimiter": `\r\n\x03`},
			func(t *testing.T, f mblb.Framing, _ bool) {
				if string(f.Delimiter) != "\r\n\x03" {
					t.Errorf("%q", f.Delimiter)
				}
			}, false},
		{"delimiter missing", map[string]string{"framing": "delimiter"}, nil, true},
		{"bad adjust", map[string]string{"framing": "length", "length-adjust": "x"}, nil, true},
		{"bad escape", map[string]string{"framing": "delimiter", "delimiter": `\xZZ`}, nil, true},
		{"bad min-conn", map[string]string{"min-conn": "x"}, nil, true},
		{"negative min-conn", map[string]string{"min-conn": "-2"}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			get := func(p *objects.Prop) string { // what is set, else the schema's default
				if v, ok := tc.set[p.Name]; ok {
					return v
				}
				return p.Default
			}
			m, err := mblbSettings(get)
			if tc.bad {
				if err == nil {
					t.Fatal("accepted")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want(t, m.Request, !m.DisableRetry)
		})
	}
}

func TestOneConnectSettings(t *testing.T) {
	for _, tc := range []struct {
		idle, mask string
		wantIdle   time.Duration
		wantMask   netip.Addr
		bad        bool
	}{
		{"disabled", "any", 0, netip.Addr{}, false},
		{"indefinite", "255.255.255.0", -1, netip.MustParseAddr("255.255.255.0"), false},
		{"30", "0.0.0.0", 30 * time.Second, netip.Addr{}, false},
		{"soon", "any", 0, netip.Addr{}, true},
		{"disabled", "everyone", 0, netip.Addr{}, true},
	} {
		vals := map[string]string{"max-size": "4", "max-age": "86400", "max-reuse": "1000",
			"idle-timeout-override": tc.idle, "source-mask": tc.mask}
		oc, err := oneConnectSettings(func(p *objects.Prop) string { return vals[p.Name] })
		if tc.bad {
			if err == nil {
				t.Errorf("%s/%s accepted", tc.idle, tc.mask)
			}
			continue
		}
		if err != nil || oc.IdleTimeoutOverride != tc.wantIdle || oc.SourceMask != tc.wantMask || oc.MaxSize != 4 {
			t.Errorf("%s/%s: %+v %v", tc.idle, tc.mask, oc, err)
		}
	}
}

// TestMBLBFlowSettings: the water marks reach the engine in bytes; a low
// mark above its high one, or a mark that is not a byte count, is refused.
func TestMBLBFlowSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  map[string]string
		want mblb.FlowControl
		bad  string
	}{
		{"BIG-IP's defaults", nil, mblb.FlowControl{IngressHigh: 50, IngressLow: 5, EgressHigh: 50, EgressLow: 5}, ""},
		{"set", map[string]string{"ingress-high": "1048576", "ingress-low": "262144", "egress-high": "0", "egress-low": "0"},
			mblb.FlowControl{IngressHigh: 1 << 20, IngressLow: 256 << 10}, ""},
		{"ingress low above high", map[string]string{"ingress-high": "100", "ingress-low": "200"}, mblb.FlowControl{}, "ingress-low 200 is above ingress-high 100"},
		{"egress low above high", map[string]string{"egress-high": "0"}, mblb.FlowControl{}, "egress-low 5 is above egress-high 0"},
		{"not a count", map[string]string{"egress-high": "lots"}, mblb.FlowControl{}, `egress-high "lots" is not a byte count`},
		{"negative", map[string]string{"ingress-low": "-1"}, mblb.FlowControl{}, `ingress-low "-1" is not a byte count`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			get := func(p *objects.Prop) string {
				if v, ok := tc.set[p.Name]; ok {
					return v
				}
				return p.Default
			}
			m, err := mblbSettings(get)
			if tc.bad != "" {
				if err == nil || err.Error() != tc.bad {
					t.Fatalf("error %v, want %q", err, tc.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Flow != tc.want {
				t.Errorf("%+v, want %+v", m.Flow, tc.want)
			}
		})
	}
}

// TestMBLBShutdownTimeout: shutdown-timeout reaches the engine in
// seconds; 0 turns it off; anything else than seconds is refused.
func TestMBLBShutdownTimeout(t *testing.T) {
	for _, tc := range []struct {
		set  string
		want time.Duration
		bad  bool
	}{
		{"", 5 * time.Second, false}, // BIG-IP's default
		{"0", 0, false},
		{"30", 30 * time.Second, false},
		{"-1", 0, true},
		{"soon", 0, true},
	} {
		get := func(p *objects.Prop) string {
			if p.Name == "shutdown-timeout" && tc.set != "" {
				return tc.set
			}
			return p.Default
		}
		m, err := mblbSettings(get)
		if tc.bad {
			if err == nil {
				t.Errorf("shutdown-timeout %q accepted", tc.set)
			}
			continue
		}
		if err != nil || m.ShutdownTimeout != tc.want {
			t.Errorf("shutdown-timeout %q: %v, %v; want %v", tc.set, m.ShutdownTimeout, err, tc.want)
		}
	}
}
