package daemon

import (
	"reflect"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

// TestVirtualTimers: a virtual's service-policy gives the dataplane its
// timer policy's rules, with protocols as numbers, ports as ranges and
// flow-idle-timeout as a duration; without one, its route domain's (or
// its parents').
func TestVirtualTimers(t *testing.T) {
	const pol = "net timer-policy /Common/tp { rules { ssh { ip-protocol tcp destination-ports { 22 { } 2200-2299 { } } timers { flow-idle-timeout { value 3600 } } }" +
		" dns { ip-protocol udp destination-ports { 53 { } } timers { flow-idle-timeout { value immediate } } }" +
		" gre { ip-protocol 47 timers { flow-idle-timeout { value indefinite } } }" +
		" rest { timers { flow-idle-timeout { value unspecified } } } } }\n" +
		"net service-policy /Common/sp { timer-policy /Common/tp }\n" +
		"net service-policy /Common/pm-only { }\n"
	vs := func(props string) string {
		return pol + "ltm virtual /Common/v { destination /Common/127.195.0.1:22 ip-protocol tcp profiles { /Common/tcp { } } " + props + " }\n"
	}
	// rd2 is a virtual at dst with route domain 2's service-policy sp2
	// and route domain 0's sp0 ("" for none).
	rd2 := func(dst, sp2, sp0 string) string {
		c := pol + "net vlan /Common/v2 { }\nnet route-domain /Common/rd2 { id 2 vlans { /Common/v2 } " + opt("service-policy", sp2) + "}\n" +
			"net route-domain /Common/0 { id 0 " + opt("service-policy", sp0) + "}\n"
		return c + "ltm virtual /Common/v { destination /Common/" + dst + " ip-protocol tcp profiles { /Common/tcp { } } }\n"
	}
	// rdChild is a virtual in route domain 6 (with props and service
	// policy sp6) beside route domain 4 (service policy sp4).
	rdChild := func(props, sp6, sp4 string) string {
		return pol + "net route-domain /Common/rd4 { id 4 " + opt("service-policy", sp4) + "}\n" +
			"net route-domain /Common/rd6 { id 6 " + props + " " + opt("service-policy", sp6) + "}\n" +
			"ltm virtual /Common/v { destination /Common/127.205.0.1%6:22 ip-protocol tcp profiles { /Common/tcp { } } }\n"
	}
	want := &dataplane.TimerPolicy{Name: "/Common/tp", Rules: []dataplane.TimerRule{
		{Name: "ssh", Proto: 6, Ports: []dataplane.TimerPorts{{Lo: 22, Hi: 22}, {Lo: 2200, Hi: 2299}}, Idle: time.Hour},
		{Name: "dns", Proto: 17, Ports: []dataplane.TimerPorts{{Lo: 53, Hi: 53}}, Idle: dataplane.TimerImmediate},
		{Name: "gre", Proto: 47},
		{Name: "rest", Proto: dataplane.TimerAllOther, Unspecified: true},
	}}
	for _, c := range []struct {
		name, conf string
		want       *dataplane.TimerPolicy // nil: none
	}{
		{"none", vs(""), nil},
		{"the virtual's", vs("service-policy /Common/sp"), want},
		{"no timer policy", vs("service-policy /Common/pm-only"), nil},
		{"route domain 0's", vs("") + "net route-domain /Common/0 { id 0 service-policy /Common/sp }\n", want},
		{"the virtual's before the route domain's", vs("service-policy /Common/pm-only") + "net route-domain /Common/0 { id 0 service-policy /Common/sp }\n", nil},
		// A virtual in route domain 2 (ADDRESS%2) takes route domain 2's,
		// not route domain 0's; one in route domain 0 not route domain 2's.
		{"its route domain's", rd2("127.195.0.1%2:22", "/Common/sp", ""), want},
		{"its route domain's, not 0's", rd2("127.195.0.1%2:22", "", "/Common/sp"), nil},
		{"route domain 0's, not another's", rd2("127.195.0.1:22", "/Common/sp", ""), nil},
		// A child route domain without a service-policy takes its
		// parent's, up the parents, named or by id; its own comes first.
		{"its parent's", rdChild("parent /Common/rd4", "", "/Common/sp"), want},
		{"its parent's by relative name", rdChild("parent rd4", "", "/Common/sp"), want},
		{"its parent's by id", rdChild("parent 4", "", "/Common/sp"), want},
		{"its grandparent's", rdChild("parent /Common/rd5", "", "/Common/sp") + "net route-domain /Common/rd5 { id 5 parent /Common/rd4 }\n", want},
		{"its own before its parent's", rdChild("parent /Common/rd4", "/Common/pm-only", "/Common/sp"), nil},
		{"no parent", rdChild("", "", "/Common/sp"), nil},
	} {
		v := translatedVirtual(t, c.name, c.conf)
		switch {
		case c.want == nil && v.Timers != nil:
			t.Errorf("%s: timers %+v, want none", c.name, *v.Timers)
		case c.want != nil && (v.Timers == nil || !reflect.DeepEqual(*v.Timers, *c.want)):
			t.Errorf("%s: timers %+v, want %+v", c.name, v.Timers, *c.want)
		}
	}
}

// opt is "name value " when value is set, else "".
func opt(name, value string) string {
	if value == "" {
		return ""
	}
	return name + " " + value + " "
}

// TestMRFTimers: a message-routing virtual's router gets the virtual's
// timer policy for its peer connections (dataplane/mrf); one without a
// service-policy none.
func TestMRFTimers(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create net timer-policy tp rules add { peer { ip-protocol tcp destination-ports add { 30700 } timers add { flow-idle-timeout { value 5 } } } }",
		"create net service-policy sp timer-policy tp",
		"create ltm pool p members add { 127.205.10.11:30700 }",
		"create ltm message-routing generic peer gp { pool p }",
		"create ltm message-routing generic route gr { peers { gp } }",
		"create ltm message-routing generic router rt { routes { gr } }",
		"create ltm message-routing generic protocol gm { message-terminator \\n }",
		"create ltm virtual vtp destination 127.205.10.1:30700 pool p profiles replace-all-with { tcp { } gm { } rt { } } service-policy sp",
		"create ltm virtual vnone destination 127.205.10.2:30700 pool p profiles replace-all-with { tcp { } gm { } rt { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, _ := Translate(e.schema, e.Config())
	vtp, vnone := dc.Virtuals["/Common/vtp"], dc.Virtuals["/Common/vnone"]
	if vtp == nil || vtp.MRF == nil || vtp.MRF.Timers == nil || vtp.MRF.Timers.Name != "/Common/tp" {
		t.Fatalf("the router of a virtual with a service-policy: %+v", vtp)
	}
	if d, ok := vtp.MRF.Timers.Idle(6, 30700); !ok || d != 5*time.Second {
		t.Errorf("peer port's idle %v %t, want 5s", d, ok)
	}
	if vnone == nil || vnone.MRF == nil || vnone.MRF.Timers != nil {
		t.Errorf("the router of a virtual without one: %+v", vnone)
	}
}
