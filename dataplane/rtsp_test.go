package dataplane

import (
	"bufio"
	"context"
	"net"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/rtsp"
)

// rtspMember runs an RTSP member (the server tcpkit rtsp-server runs).
func rtspMember(t *testing.T, addr, name string) *rtsp.Server {
	t.Helper()
	s, err := rtsp.Listen(addr, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// rtspClient is one control connection of a client at a fixed address.
type rtspClient struct {
	t    *testing.T
	c    net.Conn
	rd   *rtsp.Reader
	cseq int
}

func rtspDial(t *testing.T, from, vs string) *rtspClient {
	t.Helper()
	d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", vs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rtspClient{t: t, c: c, rd: rtsp.NewReader(c, 0, 1<<20)}
}

// do sends a request (headers as "Name: value") and reads its answer,
// skipping interleaved frames.
func (rc *rtspClient) do(method, uri string, headers ...string) *rtsp.Message {
	rc.t.Helper()
	rc.cseq++
	m := &rtsp.Message{Request: true, Method: method, URI: uri, Version: "RTSP/1.0"}
	m.Add("CSeq", strconv.Itoa(rc.cseq))
	for _, h := range headers {
		n, v, _ := strings.Cut(h, ":")
		m.Add(n, strings.TrimSpace(v))
	}
	rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := rc.c.Write(m.Encode(nil)); err != nil {
		rc.t.Fatalf("%s: %v", method, err)
	}
	for range 1000 {
		var r rtsp.Message
		frame, err := rc.rd.Next(&r)
		if err != nil {
			rc.t.Fatalf("%s: reading the answer: %v", method, err)
		}
		if frame == nil {
			return &r
		}
	}
	rc.t.Fatalf("%s: no answer among the frames", method)
	return nil
}

// udpPair binds a client's RTP and RTCP sockets on addr.
func udpPair(t *testing.T, addr string) ([]*net.UDPConn, rtsp.Ports) {
	t.Helper()
	cs, err := rtsp.ListenPair(netip.MustParseAddr(addr), rtsp.AnyPorts(2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, c := range cs {
			c.Close()
		}
	})
	return cs, rtsp.LocalPorts(cs)
}

// recvRTP waits for an RTP packet on c: its payload and where it came
// from.
func recvRTP(t *testing.T, c *net.UDPConn) (string, netip.AddrPort) {
	t.Helper()
	buf := make([]byte, 2048)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, from, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatalf("no RTP packet: %v", err)
	}
	p := rtsp.RTPPayload(buf[:n])
	if p == nil {
		t.Fatalf("not an RTP packet: %x", buf[:n])
	}
	return string(p), netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
}

// transportOf reads an answer's Transport spec.
func transportOf(t *testing.T, m *rtsp.Message) rtsp.Spec {
	t.Helper()
	if m.Status != 200 {
		t.Fatalf("answer %d %s", m.Status, m.Reason)
	}
	v, _ := m.Get("Transport")
	specs := rtsp.ParseTransport(v)
	if len(specs) != 1 {
		t.Fatalf("Transport %q", v)
	}
	return specs[0]
}

// rtspSession sets up and plays a UDP session of a client at from
// through vs, SETUP and PLAY on connections of their own as curl-driven
// clients do: the media's payload (the member's name), the session and
// the server_port the client was told.
func rtspSession(t *testing.T, from, vs string) (string, string, rtsp.Ports) {
	t.Helper()
	cs, cp := udpPair(t, from)
	url := "rtsp://" + vs + "/media"
	setup := rtspDial(t, from, vs).do("SETUP", url+"/track1", "Transport: RTP/AVP;unicast;client_port="+cp.String())
	sp := transportOf(t, setup)
	if v, _ := sp.Get("client_port"); v != cp.String() {
		t.Fatalf("client_port %q, want the client's own %s", v, cp)
	}
	if v, _ := sp.Get("source"); v != ap(vs).Addr().String() {
		t.Fatalf("source %q, want the virtual's address", v)
	}
	sv, _ := sp.Get("server_port")
	svp, ok := rtsp.ParsePorts(sv)
	if !ok {
		t.Fatalf("server_port %q", sv)
	}
	sess := setup.Session()
	play := rtspDial(t, from, vs).do("PLAY", url, "Session: "+sess, "Range: npt=0.000-")
	if play.Status != 200 {
		t.Fatalf("PLAY: %d %s", play.Status, play.Reason)
	}
	payload, src := recvRTP(t, cs[0])
	if want := netip.AddrPortFrom(ap(vs).Addr(), svp.First); src != want {
		t.Fatalf("RTP from %s, want the virtual's %s", src, want)
	}
	return payload, sess, svp
}

// TestRTSPProfile: RTSP sessions through a virtual with the rtsp profile
// to RTSP members: SETUP's Transport is rewritten both ways, the member's
// RTP reaches the client's UDP port from the virtual's address, PLAY and
// TEARDOWN on later connections reach the session's member, TEARDOWN
// frees the data channels' ports; a rule reads the method, URI and
// headers and rewrites a header both ways; interleaved RTP passes over
// the control connection; curl's OPTIONS passes.
func TestRTSPProfile(t *testing.T) {
	t.Parallel()
	m1 := rtspMember(t, "127.117.1.10:8554", "member-1")
	m2 := rtspMember(t, "127.117.1.11:8554", "member-2")
	p, lb := newPlane(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("plane log:\n%s", lb.String())
		}
	})
	cfg := basic("127.117.1.1:8554", m1.Addr(), m2.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	withPool(cfg, "/Common/p1", m1.Addr())
	add := func(name, vs, pool, rule string) {
		v := &Virtual{Name: name, Destination: ap(vs), Enabled: true, TranslateAddress: true, TranslatePort: true,
			Pool: pool, SNAT: SNAT{Type: SNATNone}, RTSP: &rtsp.Options{Profile: "/Common/rtsp", Idle: 30 * time.Second}}
		if rule != "" {
			v.Rules, _ = compileRules(t, rule)
		}
		cfg.Virtuals[name] = v
	}
	add("/Common/two", "127.117.1.1:8554", "/Common/pool", "")
	add("/Common/one", "127.117.1.2:8554", "/Common/p1", "")
	add("/Common/ruled", "127.117.1.3:8554", "/Common/p1", `when RTSP_REQUEST {
		if {[RTSP::method] eq "DESCRIBE"} {
			RTSP::header insert X-Seen "[RTSP::method] [RTSP::uri] [RTSP::header value Accept]"
		}
		if {[RTSP::uri] ends_with "/forbidden"} {
			RTSP::respond 403 content "no\n" X-By rule
			return
		}
		RTSP::header replace User-Agent openltm-rule
	}
	when RTSP_RESPONSE {
		RTSP::header insert X-Status "[RTSP::status] [RTSP::msg_source]"
		if {[RTSP::header value Content-Type] eq "application/sdp"} { RTSP::collect }
	}
	when RTSP_RESPONSE_DATA {
		RTSP::header insert X-Body "[string length [RTSP::payload]] [string trim [lindex [split [RTSP::payload] "\n"] 2]]"
		RTSP::release
	}`)
	mustApply(t, p, cfg)

	t.Run("media through the virtual, TEARDOWN closes its channels", func(t *testing.T) {
		payload, sess, svp := rtspSession(t, "127.117.1.100", "127.117.1.2:8554")
		if payload != "member-1" {
			t.Fatalf("media %q", payload)
		}
		var setup *rtsp.Message
		for _, r := range m1.Requests() {
			if r.Method == "SETUP" {
				r := r
				setup = &r
			}
		}
		if setup == nil {
			t.Fatal("the member got no SETUP")
		}
		tv, _ := setup.Get("Transport")
		if !strings.Contains(tv, "client_port=") {
			t.Fatalf("the member's Transport %q", tv)
		}
		down := rtspDial(t, "127.117.1.100", "127.117.1.2:8554").do("TEARDOWN", "rtsp://127.117.1.2:8554/media", "Session: "+sess)
		if down.Status != 200 {
			t.Fatalf("TEARDOWN: %d", down.Status)
		}
		eventually(t, "the virtual's data port is free again", func() bool {
			c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr("127.117.1.2"), svp.First)))
			if err != nil {
				return false
			}
			c.Close()
			return true
		})
	})

	t.Run("two members share the sessions", func(t *testing.T) {
		seen := map[string]bool{}
		for i := range 4 {
			from := "127.117.1." + strconv.Itoa(110+i)
			payload, sess, _ := rtspSession(t, from, "127.117.1.1:8554")
			seen[payload] = true
			rtspDial(t, from, "127.117.1.1:8554").do("TEARDOWN", "rtsp://127.117.1.1:8554/media", "Session: "+sess)
		}
		if !seen["member-1"] || !seen["member-2"] {
			t.Fatalf("media came from %v, want both members", seen)
		}
	})

	t.Run("a rule reads and rewrites headers", func(t *testing.T) {
		rc := rtspDial(t, "127.117.1.101", "127.117.1.3:8554")
		r := rc.do("DESCRIBE", "rtsp://127.117.1.3:8554/media", "Accept: application/sdp", "User-Agent: test")
		if r.Status != 200 || !strings.Contains(string(r.Body), "s=member-1") {
			t.Fatalf("DESCRIBE: %d %q", r.Status, r.Body)
		}
		if v, _ := r.Get("X-Status"); v != "200 server" {
			t.Fatalf("X-Status %q", v)
		}
		if v, _ := r.Get("X-Body"); v != strconv.Itoa(len(r.Body))+" s=member-1" {
			t.Fatalf("X-Body %q (body %d bytes)", v, len(r.Body))
		}
		before := len(m1.Requests())
		no := rc.do("DESCRIBE", "rtsp://127.117.1.3:8554/forbidden")
		if v, _ := no.Get("X-By"); no.Status != 403 || v != "rule" || string(no.Body) != "no\n" || no.CSeq() != rc.cseq {
			t.Fatalf("RTSP::respond: %+v", no)
		}
		if len(m1.Requests()) != before {
			t.Fatal("the answered request reached the member")
		}
		var got *rtsp.Message
		for _, q := range m1.Requests() {
			if q.Method == "DESCRIBE" {
				q := q
				got = &q
			}
		}
		if got == nil {
			t.Fatal("the member got no DESCRIBE")
		}
		if v, _ := got.Get("X-Seen"); v != "DESCRIBE rtsp://127.117.1.3:8554/media application/sdp" {
			t.Fatalf("X-Seen %q", v)
		}
		if v := got.Values("User-Agent"); len(v) != 1 || v[0] != "openltm-rule" {
			t.Fatalf("User-Agent %q", v)
		}
	})

	t.Run("interleaved RTP passes over the control connection", func(t *testing.T) {
		rc := rtspDial(t, "127.117.1.102", "127.117.1.2:8554")
		setup := rc.do("SETUP", "rtsp://127.117.1.2:8554/media/track1", "Transport: RTP/AVP/TCP;unicast;interleaved=0-1")
		sp := transportOf(t, setup)
		if v, _ := sp.Get("interleaved"); v != "0-1" {
			t.Fatalf("interleaved %q", v)
		}
		if r := rc.do("PLAY", "rtsp://127.117.1.2:8554/media", "Session: "+setup.Session()); r.Status != 200 {
			t.Fatalf("PLAY: %d", r.Status)
		}
		rc.c.SetDeadline(time.Now().Add(10 * time.Second))
		var m rtsp.Message
		frame, err := rc.rd.Next(&m)
		if err != nil || frame == nil || frame[0] != '$' || frame[1] != 0 {
			t.Fatalf("no interleaved frame: %q %v", frame, err)
		}
		if p := rtsp.RTPPayload(frame[4:]); string(p) != "member-1" {
			t.Fatalf("interleaved payload %q", p)
		}
		if r := rc.do("TEARDOWN", "rtsp://127.117.1.2:8554/media", "Session: "+setup.Session()); r.Status != 200 {
			t.Fatalf("TEARDOWN: %d", r.Status)
		}
	})

	t.Run("curl's OPTIONS passes", func(t *testing.T) {
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("curl is not installed")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "curl", "-sS", "-i", "--interface", "127.117.1.103", "rtsp://127.117.1.2:8554/media").CombinedOutput()
		if err != nil {
			t.Fatalf("curl: %v\n%s", err, out)
		}
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		sc.Scan()
		if !strings.HasPrefix(sc.Text(), "RTSP/1.0 200") || !strings.Contains(string(out), "Public: OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN") {
			t.Fatalf("curl got:\n%s", out)
		}
	})
}
