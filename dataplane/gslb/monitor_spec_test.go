package gslb

import (
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/monitor"
)

// httpOn serves one status on addr ("127.0.81.11:0") until the test ends.
func httpOn(t *testing.T, addr string, code int) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(code)
		w.Write([]byte("status page\n"))
	}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).AddrPort()
}

func httpSpec(recv string) *monitor.Spec {
	return &monitor.Spec{Name: "/Common/http_200", Type: monitor.HTTP, Interval: 20 * time.Millisecond, Timeout: 200 * time.Millisecond,
		Send: "GET / HTTP/1.0\r\n\r\n", Recv: regexp.MustCompile(recv)}
}

// An http monitor is judged on the answer, as for LTM pool members: a
// virtual server that accepts connections but answers 503 is down.
func TestMonitorSpecJudgesTheAnswer(t *testing.T) {
	ok := httpOn(t, "127.0.81.11:0", 200)
	failing := httpOn(t, "127.0.81.12:0", 503)
	cfg := testConfig(netip.AddrPort{})
	bj := cfg.Servers["/Common/bj-ltm"].VirtualServers
	bj[0].Destination, bj[0].Monitor = ok, Monitor{Spec: httpSpec("200 OK")}
	bj[1].Destination, bj[1].Monitor = failing, Monitor{Spec: httpSpec("200 OK")}
	s := newServer(t, cfg, Options{})
	status := func(name string) Status {
		for _, sv := range s.Servers() {
			for _, v := range sv.VirtualServers {
				if v.Name == name {
					return v.Monitor
				}
			}
		}
		return StatusUnknown
	}
	waitFor(t, "monitor verdicts", func() bool {
		return status("/Common/bj-ltm:vs_cnc") == StatusUp && status("/Common/bj-ltm:vs_ct") == StatusDown
	})
	if got := count(t, s, ldnsCNC, 9); got[bjCT] != 0 || got[bjCNC] == 0 {
		t.Errorf("answers %v: the virtual server answering 503 must get none", got)
	}
	// The same monitor compiled again (a commit of something else) keeps
	// its probes and their verdicts.
	cfg2 := testConfig(netip.AddrPort{})
	bj2 := cfg2.Servers["/Common/bj-ltm"].VirtualServers
	bj2[0].Destination, bj2[0].Monitor = ok, Monitor{Spec: httpSpec("200 OK")}
	bj2[1].Destination, bj2[1].Monitor = failing, Monitor{Spec: httpSpec("200 OK")}
	before := s.monitors["vs /Common/bj-ltm:vs_cnc"]
	if err := s.Apply(cfg2); err != nil {
		t.Fatal(err)
	}
	if s.monitors["vs /Common/bj-ltm:vs_cnc"] != before || status("/Common/bj-ltm:vs_ct") != StatusDown {
		t.Error("an unchanged monitor was restarted")
	}
}

// A gtm pool's monitor (or a member's own) is probed at the member's
// virtual server besides the virtual server's own: the pool stops
// answering with a member it finds down, and its show says why.
func TestPoolMemberMonitor(t *testing.T) {
	ok := httpOn(t, "127.0.81.11:0", 200)
	cfg := testConfig(netip.AddrPort{})
	bj := cfg.Servers["/Common/bj-ltm"].VirtualServers
	bj[0].Destination = ok
	members := cfg.Pools["/Common/app_pool"].Members
	members[0].Monitor = Monitor{Spec: httpSpec("maintenance")} // never in the answer
	s := newServer(t, cfg, Options{})
	memberStatus := func() ObjectStatus {
		for _, p := range s.Pools() {
			for _, m := range p.Members {
				if m.Member == "/Common/bj-ltm:vs_cnc" {
					return m.Status
				}
			}
		}
		return ObjectStatus{}
	}
	want := reasonMemberMonitor + " (/Common/http_200: Response did not match the receive string)"
	waitFor(t, "the pool's verdict", func() bool { return memberStatus().Reason == want })
	if st := memberStatus(); st.Availability != Offline {
		t.Errorf("member status %+v", st)
	}
	if got := count(t, s, ldnsCNC, 6); got[bjCNC] != 0 {
		t.Errorf("answers %v: the member its pool's monitor finds down must get none", got)
	}
	// The virtual server itself stays up for other pools.
	for _, sv := range s.Servers() {
		for _, v := range sv.VirtualServers {
			if v.Name == "/Common/bj-ltm:vs_cnc" && v.Status.Availability == Offline {
				t.Errorf("the virtual server went down with its pool member: %+v", v.Status)
			}
		}
	}
	// Matching the answer brings the member back.
	cfg2 := testConfig(netip.AddrPort{})
	cfg2.Servers["/Common/bj-ltm"].VirtualServers[0].Destination = ok
	cfg2.Pools["/Common/app_pool"].Members[0].Monitor = Monitor{Spec: httpSpec("status page")}
	if err := s.Apply(cfg2); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the member back", func() bool { return memberStatus().Availability == Available })
}

// A gtm monitor probes the virtual server, or its own destination when
// it names one (a port, or an address and port); a virtual server it
// finds down says which monitor did and why, and so do the pool members
// on it.
func TestGTMMonitorDestinationAndReason(t *testing.T) {
	ok := httpOn(t, "127.16.141.11:0", 200)
	failing := httpOn(t, "127.16.141.11:0", 503)
	other := httpOn(t, "127.16.141.12:0", 200)
	spec := &monitor.Spec{Name: "/Common/my_http", Type: monitor.HTTP, Interval: 20 * time.Millisecond, Timeout: time.Minute,
		ProbeTimeout: time.Second, DownOnResponse: true, Send: "GET / HTTP/1.0\r\n\r\n", Recv: regexp.MustCompile("200 OK")}
	down := reasonVSMonitorDown + " (/Common/my_http: Response did not match the receive string)"
	for _, tc := range []struct {
		name   string
		vs     netip.AddrPort
		dest   netip.AddrPort
		want   Availability
		reason string
	}{
		{"the virtual server answers 200", ok, netip.AddrPort{}, Available, reasonAvailable},
		{"the virtual server answers 503", failing, netip.AddrPort{}, Offline, down},
		{"destination *:port probes that port", failing, netip.AddrPortFrom(netip.Addr{}, ok.Port()), Available, reasonAvailable},
		{"destination addr:port probes there", failing, other, Available, reasonAvailable},
		{"destination port on a healthy one", ok, netip.AddrPortFrom(netip.Addr{}, failing.Port()), Offline, down},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(netip.AddrPort{})
			v := cfg.Servers["/Common/bj-ltm"].VirtualServers[0]
			v.Destination, v.Monitor = tc.vs, Monitor{Spec: spec, Destination: tc.dest}
			s := newServer(t, cfg, Options{})
			vsStatus := func() ObjectStatus {
				for _, sv := range s.Servers() {
					for _, x := range sv.VirtualServers {
						if x.Name == "/Common/bj-ltm:vs_cnc" && x.Monitor != StatusUnknown {
							return x.Status
						}
					}
				}
				return ObjectStatus{}
			}
			waitFor(t, "the monitor's verdict", func() bool { return vsStatus().Availability != "" })
			if st := vsStatus(); st.Availability != tc.want || st.Reason != tc.reason {
				t.Fatalf("virtual server %+v, want %s %q", st, tc.want, tc.reason)
			}
			for _, p := range s.Pools() {
				for _, m := range p.Members {
					if m.Member == "/Common/bj-ltm:vs_cnc" && tc.want == Offline && m.Status.Reason != tc.reason {
						t.Errorf("pool %s member %+v, want reason %q", p.Name, m.Status, tc.reason)
					}
				}
			}
		})
	}
}
