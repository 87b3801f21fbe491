package doh

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// dohMember is a Go DoH server in TLS (h2 offered when h2), answering
// every query with one A record, or status when it is not 200; it counts
// the requests it got and the connections it accepted.
func dohMember(t *testing.T, h2 bool, status int) (addr netip.AddrPort, reqs, conns *atomic.Int64, protos chan string) {
	t.Helper()
	reqs, conns = new(atomic.Int64), new(atomic.Int64)
	protos = make(chan string, 16)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs.Add(1)
		select {
		case protos <- r.Proto:
		default:
		}
		if status != http.StatusOK {
			http.Error(w, "failing", status)
			return
		}
		b, _ := io.ReadAll(r.Body)
		q := new(dns.Msg)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != ContentType || r.URL.Path != UpstreamPath || q.Unpack(b) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		m := new(dns.Msg)
		m.SetReply(q)
		a, _ := dns.NewRR(q.Question[0].Name + " 60 IN A 192.0.2.7")
		m.Answer = append(m.Answer, a)
		out, _ := m.Pack()
		w.Header().Set("Content-Type", ContentType)
		w.Write(out)
	}))
	srv.EnableHTTP2 = h2
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	ln, err := net.Listen("tcp", "127.176.0.1:0")
	if err != nil {
		t.Skipf("127.176.0.1 is not usable here: %v", err)
	}
	srv.Listener = ln
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return netip.MustParseAddrPort(ln.Addr().String()), reqs, conns, protos
}

// TestUpstream: queries go to a DoH member as POSTs over HTTP/2 when it
// negotiates h2, else HTTP/1.1, on one reused connection; a member that
// fails (status 500, nothing listening) is passed over for the next one,
// once; 502 when the members tried all failed, 503 when there is none.
func TestUpstream(t *testing.T) {
	good, goodReqs, goodConns, protos := dohMember(t, true, http.StatusOK)
	h1, _, _, h1protos := dohMember(t, false, http.StatusOK)
	bad, badReqs, _, _ := dohMember(t, true, http.StatusInternalServerError)
	notFound, nfReqs, _, _ := dohMember(t, true, http.StatusNotFound)
	// A port that was listening and is no more: connection refused.
	ln, err := net.Listen("tcp", "127.176.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	closed := netip.MustParseAddrPort(ln.Addr().String())
	ln.Close()

	q := new(dns.Msg)
	q.SetQuestion("app.example.", dns.TypeA)
	wire, _ := q.Pack()
	list := func(addrs ...netip.AddrPort) func(int) (Member, bool) {
		return func(i int) (Member, bool) {
			if i >= len(addrs) {
				return Member{}, false
			}
			return Member{Addr: addrs[i]}, true
		}
	}
	st := new(Stats)
	u := NewUpstream(&tls.Config{InsecureSkipVerify: true}, st, 2*time.Second)
	defer u.Close()
	for _, tc := range []struct {
		name    string
		members []netip.AddrPort
		status  int
	}{
		{"h2 member", []netip.AddrPort{good}, 200},
		{"h2 member again", []netip.AddrPort{good}, 200},
		{"http/1.1 member", []netip.AddrPort{h1}, 200},
		{"status 500, then the next", []netip.AddrPort{bad, good}, 200},
		{"refused, then the next", []netip.AddrPort{closed, good}, 200},
		{"two failures", []netip.AddrPort{bad, closed, good}, 502},
		{"status 404 is a failure", []netip.AddrPort{notFound}, 502},
		{"no member", nil, 503},
	} {
		m, status := u.Ask(q, wire, list(tc.members...))
		if status != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, status, tc.status)
			continue
		}
		if status == 200 && (m == nil || m.Id != q.Id || len(m.Answer) != 1 || m.Answer[0].(*dns.A).A.String() != "192.0.2.7") {
			t.Errorf("%s: answer %v", tc.name, m)
		}
	}
	if p := <-protos; p != "HTTP/2.0" {
		t.Errorf("the h2 member got %s", p)
	}
	if p := <-h1protos; p != "HTTP/1.1" {
		t.Errorf("the http/1.1 member got %s", p)
	}
	if n := goodReqs.Load(); n != 4 {
		t.Errorf("the good member got %d requests, want 4", n)
	}
	if n := goodConns.Load(); n != 1 {
		t.Errorf("the good member accepted %d connections, want 1 (reused)", n)
	}
	if badReqs.Load() != 2 || nfReqs.Load() != 1 {
		t.Errorf("the failing members got %d and %d requests, want 2 and 1", badReqs.Load(), nfReqs.Load())
	}
	c := st.Counts()
	if c.MemberRequests != 10 || c.MemberFailures != 5 {
		t.Errorf("member requests %d failures %d, want 10 and 5", c.MemberRequests, c.MemberFailures)
	}
}

// TestUpstreamHandler: the client gets 502 when the DoH members failed,
// and the profile counts it.
func TestUpstreamHandler(t *testing.T) {
	st := new(Stats)
	h := &Handler{Stats: st, Answer: func(*dns.Msg, []byte) (*dns.Msg, int) { return nil, http.StatusBadGateway }}
	q := new(dns.Msg)
	q.SetQuestion("app.example.", dns.TypeA)
	wire, _ := q.Pack()
	r := httptest.NewRequest("POST", "/dns-query", bytes.NewReader(wire))
	r.Header.Set("Content-Type", ContentType)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusBadGateway || st.Counts().BadGateway != 1 || st.Counts().Errors() != 1 {
		t.Errorf("status %d, counts %+v", w.Code, st.Counts())
	}
}

// TestUpstreamHandshakeHook: a member connection's TLS handshake is the
// hook's, given the query's context (the virtual whose query dialled it),
// once per kept connection; the hook's error fails the member; HTTP/2
// still follows an h2 handshake dialled this way.
func TestUpstreamHandshakeHook(t *testing.T) {
	addr, _, conns, protos := dohMember(t, true, http.StatusOK)
	type key struct{}
	for _, tc := range []struct {
		name   string
		refuse bool
		status int
	}{{"handshake counted", false, http.StatusOK}, {"handshake refused", true, http.StatusBadGateway}} {
		t.Run(tc.name, func(t *testing.T) {
			u := NewUpstream(&tls.Config{InsecureSkipVerify: true}, new(Stats), 3*time.Second)
			defer u.Close()
			var hooked atomic.Int64
			u.handshake = func(ctx context.Context, c *tls.Conn) error {
				if ctx.Value(key{}) != "vs" {
					t.Errorf("the hook's context lacks the query's value")
				}
				hooked.Add(1)
				if tc.refuse {
					return errors.New("refused by the hook")
				}
				return c.HandshakeContext(ctx)
			}
			ctx := context.WithValue(context.Background(), key{}, "vs")
			q := new(dns.Msg)
			q.SetQuestion("hook.example.", dns.TypeA)
			wire, _ := q.Pack()
			for i := range 3 {
				m, status := u.AskContext(ctx, q, wire, func(int) (Member, bool) { return Member{Addr: addr}, true })
				if status != tc.status || (status == http.StatusOK) != (m != nil) {
					t.Fatalf("query %d: status %d, answer %v; want %d", i, status, m != nil, tc.status)
				}
			}
			if want := int64(1); !tc.refuse && hooked.Load() != want {
				t.Errorf("%d handshakes for three queries on a kept connection, want 1", hooked.Load())
			}
			if tc.refuse && hooked.Load() == 0 {
				t.Error("the hook never ran")
			}
		})
	}
	if conns.Load() == 0 {
		t.Fatal("the member saw no connection")
	}
	select {
	case p := <-protos:
		if p != "HTTP/2.0" {
			t.Errorf("the member was asked over %s, want HTTP/2.0", p)
		}
	default:
		t.Error("the member got no request")
	}
}
