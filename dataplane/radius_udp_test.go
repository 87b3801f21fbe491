package dataplane

import (
	"context"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
)

// radiusMember is a RADIUS server (layeh.com/radius, which refuses a
// request whose authenticator the secret does not give): it accepts
// every Access-Request and answers every Accounting-Request, with a
// Reply-Message naming itself and what it saw.
type radiusMember struct {
	label string
	mu    sync.Mutex
	seen  []string // "code user csid" per request
}

func startRADIUSMember(t *testing.T, addr, label, secret string) *radiusMember {
	t.Helper()
	c, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatalf("member %s: %v", addr, err)
	}
	m := &radiusMember{label: label}
	srv := &radius.PacketServer{
		SecretSource: radius.StaticSecretSource([]byte(secret)),
		Handler: radius.HandlerFunc(func(w radius.ResponseWriter, r *radius.Request) {
			user, csid := rfc2865.UserName_GetString(r.Packet), rfc2865.CallingStationID_GetString(r.Packet)
			m.mu.Lock()
			m.seen = append(m.seen, r.Code.String()+" "+user+" "+csid)
			m.mu.Unlock()
			code := radius.CodeAccessAccept
			if r.Code == radius.CodeAccountingRequest {
				code = radius.CodeAccountingResponse
			}
			resp := r.Response(code)
			rfc2865.ReplyMessage_SetString(resp, label+" user="+user)
			w.Write(resp)
		}),
	}
	go srv.Serve(c)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return m
}

func (m *radiusMember) requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.seen...)
}

// radiusAsk sends one request from a new socket on src (a new flow each
// time, as a NAS with many ports) and returns the answer, which layeh
// has checked against the request's authenticator and the secret.
func radiusAsk(t *testing.T, vs, src, secret string, code radius.Code, user, csid string) (*radius.Packet, error) {
	t.Helper()
	p := radius.New(code, []byte(secret))
	rfc2865.UserName_SetString(p, user)
	if csid != "" {
		rfc2865.CallingStationID_SetString(p, csid)
	}
	if code == radius.CodeAccessRequest {
		rfc2865.UserPassword_SetString(p, "pw")
	} else {
		rfc2866.AcctStatusType_Set(p, rfc2866.AcctStatusType_Value_Start)
	}
	c := radius.Client{Retry: 300 * time.Millisecond, Dialer: net.Dialer{LocalAddr: net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(src), 0))}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return c.Exchange(ctx, p, vs)
}

func replyMember(p *radius.Packet) string {
	l, _, _ := strings.Cut(rfc2865.ReplyMessage_GetString(p), " ")
	return l
}

// radiusVirtual is a UDP virtual with a radius profile over the members.
func radiusVirtual(t *testing.T, vs string, prof RADIUSProfile, rule string, members ...string) *Plane {
	t.Helper()
	p, _ := newPlane(t)
	cfg := udpBasic(vs, members...)
	cfg.Virtuals["/Common/vs"].RADIUS = &prof
	if rule != "" {
		cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
	}
	mustApply(t, p, cfg)
	return p
}

// TestRADIUSPersistAVP: with persist-avp 31 every request of one
// Calling-Station-Id reaches one member, from whatever client port;
// without it the same requests are spread over both members.
func TestRADIUSPersistAVP(t *testing.T) {
	t.Parallel()
	const secret = "testing123"
	for _, c := range []struct {
		name    string
		vs, m1  string
		m2      string
		avp     uint8
		persist bool
	}{
		{"persist-avp 31", "127.105.1.1:1812", "127.105.1.2:1812", "127.105.1.3:1812", 31, true},
		{"no persist-avp", "127.105.1.11:1812", "127.105.1.12:1812", "127.105.1.13:1812", 0, false},
	} {
		startRADIUSMember(t, c.m1, "S1", secret)
		startRADIUSMember(t, c.m2, "S2", secret)
		radiusVirtual(t, c.vs, RADIUSProfile{PersistAVP: c.avp}, "", c.m1, c.m2)
		got := map[string]map[string]int{}
		for i := 0; i < 6; i++ {
			for _, csid := range []string{"02-00-00-00-00-aa", "02-00-00-00-00-bb", "02-00-00-00-00-cc"} {
				resp, err := radiusAsk(t, c.vs, "127.105.1.100", secret, radius.CodeAccessRequest, "u"+csid[len(csid)-2:], csid)
				if err != nil {
					t.Fatalf("%s: %s: %v", c.name, csid, err)
				}
				if resp.Code != radius.CodeAccessAccept {
					t.Fatalf("%s: answer %v", c.name, resp.Code)
				}
				if got[csid] == nil {
					got[csid] = map[string]int{}
				}
				got[csid][replyMember(resp)]++
			}
		}
		// Three subscribers over two members in round robin: balanced one
		// by one, each would reach both; persisted, each reaches one, and
		// the first two were split.
		aa, bb := got["02-00-00-00-00-aa"], got["02-00-00-00-00-bb"]
		if c.persist {
			for csid, ms := range got {
				if len(ms) != 1 {
					t.Fatalf("%s: %s reached several members: %v", c.name, csid, got)
				}
			}
			for m := range aa {
				if bb[m] != 0 {
					t.Fatalf("%s: the first two subscribers both on %s: %v", c.name, m, got)
				}
			}
		} else if len(aa) != 2 {
			t.Fatalf("%s: requests were not balanced one by one: %v", c.name, got)
		}
	}
}

// TestRADIUSRetransmission: a request sent again (same identifier and
// authenticator from the same client) reaches the member the first copy
// did, while new requests are balanced; a datagram that is not RADIUS is
// dropped.
func TestRADIUSRetransmission(t *testing.T) {
	t.Parallel()
	const secret = "testing123"
	vs := "127.105.2.1:1812"
	m1 := startRADIUSMember(t, "127.105.2.2:1812", "S1", secret)
	m2 := startRADIUSMember(t, "127.105.2.3:1812", "S2", secret)
	radiusVirtual(t, vs, RADIUSProfile{}, "", "127.105.2.2:1812", "127.105.2.3:1812")
	u := dialUDP(t, "127.105.2.100:0", vs)
	mk := func(id byte, user string) (*radius.Packet, []byte) {
		p := radius.New(radius.CodeAccessRequest, []byte(secret))
		p.Identifier = id
		rfc2865.UserName_SetString(p, user)
		b, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return p, b
	}
	ask := func(p *radius.Packet, b []byte) string {
		t.Helper()
		a := u.mustAsk(string(b))
		resp, err := radius.Parse([]byte(a), []byte(secret))
		if err != nil || !radius.IsAuthenticResponse([]byte(a), b, []byte(secret)) {
			t.Fatalf("answer to %d: %v (authentic %v)", p.Identifier, err, err == nil)
		}
		return replyMember(resp)
	}
	p7, b7 := mk(7, "first")
	first := ask(p7, b7)
	for i := 0; i < 4; i++ {
		if again := ask(p7, b7); again != first {
			t.Fatalf("retransmission %d went to %s, the request to %s", i, again, first)
		}
		pn, bn := mk(byte(8+i), "other")
		ask(pn, bn) // balanced: alternates
	}
	if u.ask("not radius at all") != "" {
		t.Fatal("a datagram that is not RADIUS was answered")
	}
	if n1, n2 := len(m1.requests()), len(m2.requests()); n1 == 0 || n2 == 0 {
		t.Fatalf("new requests were not balanced: S1 %d S2 %d", n1, n2)
	}
}

// TestRADIUSRuleRewrite: an iRule reads the request's code, identifier
// and attributes and rewrites them on the way to the member, and the
// member's Reply-Message on the way back; with the client's secret in
// the profile's clients the edited packets are signed again, so that
// the member takes the accounting request and the client the answers.
func TestRADIUSRuleRewrite(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t"
	rule := `when CLIENT_DATA {
    set user [RADIUS::avp User-Name]
    RADIUS::avp replace User-Name "rw-[RADIUS::code]-$user"
    if {[RADIUS::avp 31] eq ""} { RADIUS::avp insert 31 "02-00-00-00-00-99" }
}
when SERVER_DATA {
    RADIUS::avp replace Reply-Message "[RADIUS::avp Reply-Message] id=[RADIUS::id] code=[RADIUS::code]"
}`
	for _, c := range []struct {
		name, vs, m string
		secrets     []RADIUSClient
		signed      bool
	}{
		{"signed", "127.105.3.1:1812", "127.105.3.2:1812", []RADIUSClient{{Net: netip.MustParsePrefix("127.105.3.0/24"), Secret: []byte(secret)}}, true},
		{"no secret", "127.105.3.11:1812", "127.105.3.12:1812", nil, false},
	} {
		m := startRADIUSMember(t, c.m, "S1", secret)
		radiusVirtual(t, c.vs, RADIUSProfile{Clients: c.secrets}, rule, c.m)
		resp, err := radiusAsk(t, c.vs, "127.105.3.100", secret, radius.CodeAccessRequest, "alice", "")
		if !c.signed {
			if err == nil {
				t.Fatalf("%s: an edited answer verified without the secret: %q", c.name, rfc2865.ReplyMessage_GetString(resp))
			}
			if got := m.requests(); len(got) == 0 || got[0] != "Access-Request rw-1-alice 02-00-00-00-00-99" {
				t.Fatalf("%s: the member saw %q", c.name, got)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: access: %v", c.name, err)
		}
		if got, want := rfc2865.ReplyMessage_GetString(resp), "S1 user=rw-1-alice id="; !strings.HasPrefix(got, want) || !strings.HasSuffix(got, " code=2") {
			t.Fatalf("%s: Reply-Message %q, want %q...code=2", c.name, got, want)
		}
		if _, err := radiusAsk(t, c.vs, "127.105.3.100", secret, radius.CodeAccountingRequest, "bob", "02-00-00-00-00-01"); err != nil {
			t.Fatalf("%s: accounting: %v", c.name, err)
		}
		want := []string{"Access-Request rw-1-alice 02-00-00-00-00-99", "Accounting-Request rw-4-bob 02-00-00-00-00-01"}
		if got := m.requests(); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("%s: the member saw %q, want %q", c.name, got, want)
		}
	}
}

// TestRADIUSRadclient drives the virtual with FreeRADIUS's radclient
// when it is installed.
func TestRADIUSRadclient(t *testing.T) {
	t.Parallel()
	path, err := exec.LookPath("radclient")
	if err != nil {
		t.Skip("radclient (freeradius-utils) is not installed")
	}
	const secret = "testing123"
	vs := "127.105.4.1:1812"
	startRADIUSMember(t, "127.105.4.2:1812", "S1", secret)
	startRADIUSMember(t, "127.105.4.3:1812", "S2", secret)
	radiusVirtual(t, vs, RADIUSProfile{PersistAVP: 31}, "", "127.105.4.2:1812", "127.105.4.3:1812")
	seen := map[string]bool{}
	for i := 0; i < 4; i++ {
		cmd := exec.Command(path, "-x", "-r", "3", "-t", "2", vs, "auth", secret)
		cmd.Stdin = strings.NewReader("User-Name = nas-user\nUser-Password = pw\nCalling-Station-Id = \"02-00-00-00-00-cc\"\n")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("radclient: %v\n%s", err, out)
		}
		s := string(out)
		if !strings.Contains(s, "Access-Accept") {
			t.Fatalf("radclient: no Access-Accept:\n%s", s)
		}
		for _, l := range []string{"S1", "S2"} {
			if strings.Contains(s, `"`+l+" ") {
				seen[l] = true
			}
		}
	}
	if len(seen) != 1 {
		t.Fatalf("one Calling-Station-Id reached %v", seen)
	}
}
