package rules

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// TestFlowCreateRelated: FLOW::create_related's body becomes a related
// listener's spec (bound at the client flow's local end, taking the
// client flow's remote end, proxied to the server flow's remote end),
// with F5's substituted form, and what openltm cannot do is a Tcl
// error that opens nothing.
func TestFlowCreateRelated(t *testing.T) {
	cases := []struct {
		name, body string
		ret        string
		spec       ListenSpec
		err        string
	}{
		{"F5's example form", `FLOW::create_related {
			proto 6
			clientflow [IP::remote_addr] 1221 0
			serverflow [IP::local_addr] 1221 0
		}`, "127.0.0.43,30001,127.0.0.9,1221,0,6", ListenSpec{Proto: 6, Timeout: listenTimeout, VLAN: "0",
			Server: netip.MustParseAddrPort("127.0.0.43:1221"), Allow: netip.MustParseAddr("127.0.0.9"), AllowPort: 1221}, ""},
		{"local end given, any port, udp", `FLOW::create_related { proto 17; clientflow -local-ip 127.0.0.50 -local-port 5060 10.0.0.1 0 vlan10; serverflow 10.1.1.1 5060 vlan20 }`,
			"127.0.0.50,5060,10.0.0.1,0,vlan10,17", ListenSpec{Proto: 17, Timeout: listenTimeout, VLAN: "vlan10",
				Bind: netip.MustParseAddrPort("127.0.0.50:5060"), Server: netip.MustParseAddrPort("10.1.1.1:5060"), Allow: netip.MustParseAddr("10.0.0.1")}, ""},
		{"inherit-vs of its own virtual", `FLOW::create_related { clientflow 10.0.0.1 20 0; serverflow 10.1.1.1 20 0; inherit-vs vs_http }`,
			"127.0.0.43,30001,10.0.0.1,20,0,6", ListenSpec{Proto: 6, Timeout: listenTimeout, VLAN: "0",
				Server: netip.MustParseAddrPort("10.1.1.1:20"), Allow: netip.MustParseAddr("10.0.0.1"), AllowPort: 20}, ""},
		{"inherit-vs of another", `FLOW::create_related { clientflow 10.0.0.1 20 0; serverflow 10.1.1.1 20 0; inherit-vs /Common/other }`, "", ListenSpec{}, "can only be one of this virtual server's own"},
		{"server flow's source", `FLOW::create_related { clientflow 10.0.0.1 20 0; serverflow -local-ip 10.2.2.2 10.1.1.1 20 0 }`, "", ListenSpec{}, "serverflow -local-ip and -local-port are not supported"},
		{"hairpin", `FLOW::create_related -hairpin { clientflow 10.0.0.1 20 0; serverflow 10.1.1.1 20 0 }`, "", ListenSpec{}, "-hairpin needs an LSN"},
		{"no server flow", `FLOW::create_related { clientflow 10.0.0.1 20 0 }`, "", ListenSpec{}, "both clientflow and serverflow are needed"},
		{"flow without its vlan", `FLOW::create_related { clientflow 10.0.0.1 20; serverflow 10.1.1.1 20 0 }`, "", ListenSpec{}, "clientflow takes"},
		{"bad option", `FLOW::create_related -loose { clientflow 10.0.0.1 20 0; serverflow 10.1.1.1 20 0 }`, "", ListenSpec{}, `bad option "-loose"`},
		{"bad proto", `FLOW::create_related { proto 1; clientflow 10.0.0.1 20 0; serverflow 10.1.1.1 20 0 }`, "", ListenSpec{}, `bad proto "1"`},
		{"bad clause", `FLOW::create_related { clientflow 10.0.0.1 20 0; serverflow 10.1.1.1 20 0; timeout 5 }`, "", ListenSpec{}, `bad clause "timeout"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompile(t, "l", "when CLIENT_ACCEPTED {\nset ::ret [catch {"+c.body+"} ::out]\n}")
			f := &relatedFake{listenFake: &listenFake{fakeConn: newFakeConn()}}
			s := NewProgram(&Env{}, r).NewConnState(f)
			defer s.Release()
			if err := s.Run(ClientAccepted); err != nil {
				t.Fatal(err)
			}
			ret, _ := s.Var("ret")
			out, _ := s.Var("out")
			if c.err != "" {
				if ret != "1" || !strings.Contains(out, c.err) {
					t.Errorf("got %s %q, want an error with %q", ret, out, c.err)
				}
				if len(f.specs) != 0 {
					t.Errorf("a listener was opened: %+v", f.specs)
				}
				return
			}
			if ret != "0" || out != c.ret {
				t.Fatalf("got %s %q, want %q", ret, out, c.ret)
			}
			if len(f.specs) != 1 || f.specs[0] != c.spec {
				t.Errorf("spec %+v\nwant %+v", f.specs, c.spec)
			}
		})
	}
}

// relatedFake is a listenFake that knows its virtual server's name.
type relatedFake struct{ *listenFake }

func (relatedFake) VirtualName() string                                   { return "/Common/vs_http" }
func (relatedFake) LBMode(string) (string, error)                         { return "round-robin", nil }
func (relatedFake) Members(string) ([]netip.AddrPort, error)              { return nil, nil }
func (relatedFake) MemberInfo(string, netip.AddrPort) (MemberInfo, error) { return MemberInfo{}, nil }

// TestMissingCommands: the F5 commands openltm has no backing for are
// kept with a warning that says why, and are Tcl errors when a script
// builds the call at run time; HTTP::response is the response's head.
func TestMissingCommands(t *testing.T) {
	for _, tc := range []struct{ cmd, why string }{
		{"relate_client {proto 17}", "forwarding data plane"},
		{"relate_server {proto 17}", "forwarding data plane"},
		{"DECOMPRESS::enable response", "no decompression filter"},
		{"HTTPLOG::disable", "request-log profile"},
		{"SMTP::disable", "SMTPS::disable"},
		{"FTP::enforce_tls_session_reuse enable", "FTPS through"},
		{"BIGTCP::release_flow", "passthrough"},
		{"LINE::get", "F5 documents neither"},
		{"DATAGRAM::ip ttl", "IP headers"},
		{"TCP::analytics enable", "analytics profile"},
		{"CACHE::statskey k", "statistics by key"},
		{"CACHE::trace", "trace log"},
		{"WS::payload_ivs", "internal virtual server"},
	} {
		name := strings.Fields(tc.cmd)[0]
		r, err := Compile("r", "when CLIENT_ACCEPTED { "+tc.cmd+" }")
		var ue *UnsupportedError
		if !errors.As(err, &ue) || r == nil || len(r.Unsupported()) != 1 || !strings.HasPrefix(r.Unsupported()[0], name+" (") || !strings.Contains(r.Unsupported()[0], tc.why) {
			t.Errorf("%s: %v; want it kept with a warning giving %q", tc.cmd, err, tc.why)
		}
		_, err = evalIn(t, newFakeConn(), &Env{}, ClientAccepted, "eval [list "+tc.cmd+"]")
		if err == nil || !strings.Contains(err.Error(), name+": not supported") || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%s at run time: %v; want a Tcl error with %q", tc.cmd, err, tc.why)
		}
	}
	f := newHTTPFake(t, testRequest, testResponse)
	got, err := evalIn(t, f, nil, HTTPResponse, "HTTP::response")
	if err != nil || got != f.resp.String() || !strings.HasPrefix(got, "HTTP/1.1 302 Found\r\n") {
		t.Errorf("HTTP::response = %q %v, want the response head", got, err)
	}
	if _, err := evalIn(t, newHTTPFake(t, testRequest, ""), nil, HTTPRequest, "HTTP::response"); err == nil {
		t.Error("HTTP::response without a response: no error")
	}
}
