package daemon

import (
	"fmt"
	"reflect"
	"strings"
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
		v := translatedVirtual(t, c.name, c.conf)
		switch {
		case c.want == nil && v.Eviction != nil:
			t.Errorf("%s: eviction %+v, want none", c.name, *v.Eviction)
		case c.want != nil && (v.Eviction == nil || !reflect.DeepEqual(*v.Eviction, *c.want)):
			t.Errorf("%s: eviction %+v, want %+v", c.name, v.Eviction, *c.want)
		}
	}
}

// TestEvictionStrategiesTranslate: slow-flow, bias-fast and bias-slow
// with their delays, and the low-priority virtual servers and route
// domains as the virtuals they name, reach the dataplane; a route
// domain with a connection-limit and the global policy become eviction
// contexts, and a virtual's destination gives its route domain.
func TestEvictionStrategiesTranslate(t *testing.T) {
	const conf = `ltm eviction-policy /Common/ep { slow-flow { enabled true grace-period 3 threshold-bps 500 throttling enabled eviction-type count maximum 7 } strategies { bias-fast { enabled true delay 2 } bias-slow { enabled true delay 4 } low-priority-virtual-server { enabled true names { a /Common/nope } } low-priority-route-domain { enabled true names { rd1 } } } }
net route-domain /Common/rd1 { id 1 connection-limit 9 flow-eviction-policy /Common/ep }
net route-domain /Common/rd2 { id 2 flow-eviction-policy /Common/ep }
ltm global-settings connection { global-flow-eviction-policy /Common/ep }
ltm virtual /Common/a { destination /Common/127.191.21.1:80 ip-protocol tcp profiles { /Common/tcp { } } connection-limit 4 flow-eviction-policy /Common/ep }
ltm virtual /Common/b { destination /Common/127.191.21.2%1:80 ip-protocol tcp profiles { /Common/tcp { } } }
ltm virtual /Common/c { destination /Common/127.191.21.3%1:80 ip-protocol tcp profiles { /Common/tcp { } } }
`
	cfg := gtmConfig(t, conf)
	rb := &ruleBinder{pending: map[*dataplane.Virtual]ruleList{}}
	dc, _, _, _ := translate(objects.Default, cfg, rb)
	a := dc.Virtuals["/Common/a"]
	if a == nil || a.Eviction == nil {
		t.Fatalf("virtual a: no eviction")
	}
	want := dataplane.EvictionPolicy{Name: "/Common/ep", High: 95, Low: 85,
		BiasFast: true, BiasSlow: true, FastDelay: 2 * time.Second, SlowDelay: 4 * time.Second,
		LowVirtuals: map[string]bool{"/Common/a": true, "/Common/b": true, "/Common/c": true},
		Slow:        &dataplane.EvictionSlowFlow{Threshold: 500, Grace: 3 * time.Second, Throttle: true, Max: 7}}
	if !reflect.DeepEqual(*a.Eviction, want) {
		t.Errorf("eviction %+v (slow %+v), want %+v", *a.Eviction, a.Eviction.Slow, want)
	}
	if a.RouteDomain != 0 || dc.Virtuals["/Common/b"].RouteDomain != 1 {
		t.Errorf("route domains a %d b %d, want 0 1", a.RouteDomain, dc.Virtuals["/Common/b"].RouteDomain)
	}
	var got []string
	for _, c := range dc.EvictionContexts {
		got = append(got, fmt.Sprintf("%s rd%d global=%v limit>0=%v %s", c.Name, c.RouteDomain, c.Global, c.Limit > 0, c.Policy.Name))
	}
	if w := []string{"/Common/rd1 rd1 global=false limit>0=true /Common/ep", "global rd0 global=true limit>0=true /Common/ep"}; !reflect.DeepEqual(got, w) {
		t.Errorf("contexts %q, want %q", got, w)
	}
	notes := strings.Join(rb.notes, "\n")
	for _, w := range []string{"/Common/nope is not a virtual server", "net route-domain /Common/rd2: flow-eviction-policy /Common/ep is kept but evicts nothing"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes %q, want %q", notes, w)
		}
	}
}

// translatedVirtual translates conf (a table test's case named name) and
// returns its /Common/v.
func translatedVirtual(t *testing.T, name, conf string) *dataplane.Virtual {
	t.Helper()
	cfg := gtmConfig(t, conf)
	dc, _, _, _ := translate(objects.Default, cfg, &ruleBinder{pending: map[*dataplane.Virtual]ruleList{}})
	v := dc.Virtuals["/Common/v"]
	if v == nil {
		t.Fatalf("%s: no virtual in the translation", name)
	}
	return v
}
