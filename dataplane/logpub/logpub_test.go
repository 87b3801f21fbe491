package logpub

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/hsl"
	"github.com/openltm/openltm/dataplane/syslog"
)

// fakeHub records what destinations open and send.
type fakeHub struct {
	opened []string
	sent   []string
	full   bool
}

func (f *fakeHub) OpenDistributed(proto, pool string, d hsl.Distribution) (string, error) {
	if pool == "/Common/gone" {
		return "", fmt.Errorf("no such pool: %s", pool)
	}
	h := fmt.Sprintf("%s:%s:%s", proto, pool, d)
	f.opened = append(f.opened, h)
	return h, nil
}

func (f *fakeHub) Send(handle string, data []byte) (bool, error) {
	if f.full {
		return false, nil
	}
	f.sent = append(f.sent, handle+" "+string(data))
	return true, nil
}

// TestPublisherSendsToEveryDestination: raw, syslog-wrapped and local
// destinations each get the message; a destination of another kind
// and one whose pool is gone take nothing.
func TestPublisherSendsToEveryDestination(t *testing.T) {
	at := time.Date(2024, 5, 14, 13, 23, 40, 0, time.UTC)
	pub := &Publisher{Name: "/Common/all", Dests: []*Destination{
		{Name: "/Common/raw", Remote: &Remote{Proto: "UDP", Pool: "/Common/p1", Dist: hsl.Balanced}},
		{Name: "/Common/rs", Remote: &Remote{Proto: "TCP", Pool: "/Common/p2", Dist: hsl.Replicated},
			Syslog: &syslog.Header{Format: syslog.RFC3164, Facility: 16, Severity: 6, Hostname: "lb1", App: "tmm", Framed: true}},
		{Name: "/Common/local-syslog", Local: true},
		{Name: "/Common/splunk"},
		{Name: "/Common/gone", Remote: &Remote{Proto: "UDP", Pool: "/Common/gone"}},
	}}
	var local []string
	set := NewSet([]*Publisher{pub})
	set.Local = func(f, l string) { local = append(local, f+" "+l) }
	set.Now = func() time.Time { return at }
	hub := &fakeHub{}
	for _, name := range []string{"all", "/Common/all"} {
		p, ok := set.Lookup(name)
		if !ok || p != pub {
			t.Fatalf("Lookup(%q) = %v, %v", name, p, ok)
		}
	}
	if _, ok := set.Lookup("/Other/all"); ok {
		t.Fatal("a publisher found in the wrong folder")
	}
	cases := []struct {
		msg        string
		sent       []string
		localLines []string
	}{
		{"<190> GET /a\n", []string{"UDP:/Common/p1:balanced <190> GET /a\n", "TCP:/Common/p2:replicated <190>May 14 13:23:40 lb1 tmm: GET /a\n"}, []string{"local7.info GET /a"}},
		{"plain", []string{"UDP:/Common/p1:balanced plain", "TCP:/Common/p2:replicated <134>May 14 13:23:40 lb1 tmm: plain\n"}, []string{"local0.info plain"}},
	}
	for _, c := range cases {
		hub.sent, local = nil, nil
		if !set.Send(hub, pub, []byte(c.msg)) {
			t.Errorf("%q: not sent", c.msg)
		}
		if !reflect.DeepEqual(hub.sent, c.sent) || !reflect.DeepEqual(local, c.localLines) {
			t.Errorf("%q:\nsent  %q\nwant  %q\nlocal %q\nwant  %q", c.msg, hub.sent, c.sent, local, c.localLines)
		}
	}
	if want := []string{"UDP:/Common/p1:balanced", "TCP:/Common/p2:replicated"}; !reflect.DeepEqual(hub.opened, want) {
		t.Errorf("opened %q; want %q (once each)", hub.opened, want)
	}
	// Without a hub only the local destination takes it.
	local = nil
	if !set.Send(nil, pub, []byte("x")) || len(local) != 1 {
		t.Errorf("without a hub: local %q", local)
	}
	// A full queue everywhere, and no local destination: not sent.
	remoteOnly := &Publisher{Name: "/Common/r", Dests: pub.Dests[:2]}
	if set.Send(&fakeHub{full: true}, remoteOnly, []byte("x")) {
		t.Error("a message every queue dropped counted as sent")
	}
	var nilSet *Set
	if _, ok := nilSet.Lookup("all"); ok {
		t.Error("a nil set found a publisher")
	}
}

// TestRawPublisherAllocatesNothing: a raw destination passes the rule's
// bytes on as HSL::send -pool does.
func TestRawPublisherAllocatesNothing(t *testing.T) {
	pub := &Publisher{Name: "/Common/raw", Dests: []*Destination{{Remote: &Remote{Proto: "UDP", Pool: "/Common/p"}}}}
	set := NewSet([]*Publisher{pub})
	hub := nopHub{}
	msg := []byte("<134>m")
	set.Send(hub, pub, msg)
	if n := testing.AllocsPerRun(100, func() { set.Send(hub, pub, msg) }); n != 0 {
		t.Errorf("%v allocations per message", n)
	}
}

type nopHub struct{}

func (nopHub) OpenDistributed(proto, pool string, d hsl.Distribution) (string, error) {
	return "h", nil
}
func (nopHub) Send(string, []byte) (bool, error) { return true, nil }
