package daemon

import (
	"reflect"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// TestVirtualEviction: a virtual's flow-eviction-policy reaches the
// dataplane with its water marks and the strategies openltm acts on,
// and only with a connection-limit to measure them against.
func TestVirtualEviction(t *testing.T) {
	const pol = "ltm eviction-policy /Common/ep { high-water 100 low-water 75 strategies { bias-bytes { enabled true delay 5 } bias-idle { enabled false } } }\n"
	vs := func(props string) string {
		return pol + "ltm virtual /Common/v { destination /Common/127.184.21.1:80 ip-protocol tcp profiles { /Common/tcp { } } " + props + " }\n"
	}
	for _, c := range []struct {
		name, conf string
		want       *dataplane.EvictionPolicy // nil: none
	}{
		{"none", vs("connection-limit 4"), nil},
		{"built-in", vs("connection-limit 4 flow-eviction-policy /Common/default-eviction-policy"),
			&dataplane.EvictionPolicy{Name: "/Common/default-eviction-policy", High: 95, Low: 85, BiasIdle: true, BiasOldest: true}},
		{"own", vs("connection-limit 4 flow-eviction-policy /Common/ep"),
			&dataplane.EvictionPolicy{Name: "/Common/ep", High: 100, Low: 75, BiasBytes: true, BytesDelay: 5 * time.Second}},
		{"no connection-limit", vs("flow-eviction-policy /Common/ep"), nil},
		{"low-priority ports", "ltm eviction-policy /Common/lp { strategies { low-priority-port { enabled true ports { web { port-number http protocol tcp } alt { port-number 8080 } } } } }\n" +
			"ltm virtual /Common/v { destination /Common/127.184.21.1:80 ip-protocol tcp profiles { /Common/tcp { } } connection-limit 9 flow-eviction-policy /Common/lp }\n",
			&dataplane.EvictionPolicy{Name: "/Common/lp", High: 95, Low: 85, LowPorts: []dataplane.EvictionLowPort{{Port: 80, Proto: "tcp"}, {Port: 8080, Proto: "any"}}}},
		{"low-priority ports disabled", "ltm eviction-policy /Common/lp { strategies { low-priority-port { ports { web { port-number http } } } } }\n" +
			"ltm virtual /Common/v { destination /Common/127.184.21.1:80 ip-protocol tcp profiles { /Common/tcp { } } connection-limit 9 flow-eviction-policy /Common/lp }\n",
			&dataplane.EvictionPolicy{Name: "/Common/lp", High: 95, Low: 85}},
	} {
		cfg := gtmConfig(t, c.conf)
		dc, _, _, _ := translate(objects.Default, cfg, &ruleBinder{pending: map[*dataplane.Virtual]ruleList{}})
		v := dc.Virtuals["/Common/v"]
		if v == nil {
			t.Fatalf("%s: no virtual in the translation", c.name)
		}
		switch {
		case c.want == nil && v.Eviction != nil:
			t.Errorf("%s: eviction %+v, want none", c.name, *v.Eviction)
		case c.want != nil && (v.Eviction == nil || !reflect.DeepEqual(*v.Eviction, *c.want)):
			t.Errorf("%s: eviction %+v, want %+v", c.name, v.Eviction, *c.want)
		}
	}
}
