package dataplane

import (
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/fix"
	"github.com/openltm/openltm/dataplane/fix/fixtest"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// TestFIXOverTLS: a fix virtual with client-ssl reads FIX inside the
// client's TLS (a FIX_HEADER rule picks the pool by SenderCompID, a
// sender's tag map renumbers a tag both ways), with server-ssl toward an
// acceptor behind TLS, and without rules; a malformed message inside TLS
// resets the session under drop-connection as in plaintext; a client
// that closes after its messages sees the member's close as TLS's
// close_notify.
func TestFIXOverTLS(t *testing.T) {
	t.Parallel()
	cert, key, roots := testCert(t, "fix.example")
	plainA := startAcceptor(t, "127.110.2.10:9878", "member-a")
	plainB := startAcceptor(t, "127.110.2.11:9878", "member-b")
	mcert, mkey, _ := testCert(t, "member.example")
	pair, err := tlsprof.Pair("member", mcert, mkey, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.110.2.12:9879", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	secure := fixtest.Serve(ln, "member-tls")
	t.Cleanup(secure.Close)

	p, _ := newPlane(t)
	cfg := basic("127.110.2.1:9878", plainA.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	withPool(cfg, "/Common/pb", plainB.Addr())
	withPool(cfg, "/Common/secure", secure.Addr())
	fixVirtual(t, cfg, "/Common/rule", "127.110.2.1:9878", "/Common/pool", fix.Options{FullLogon: true,
		SenderTags: map[string]map[int]int{"DESKS": {10001: 20001}}}, `when FIX_HEADER {
		if {[FIX::tag get 35] eq "A" && [FIX::tag get 49] starts_with "B-"} { pool /Common/pb }
	}`)
	fixVirtual(t, cfg, "/Common/both", "127.110.2.2:9878", "/Common/secure", fix.Options{FullLogon: true}, "")
	fixVirtual(t, cfg, "/Common/strict", "127.110.2.3:9878", "/Common/pool", fix.Options{FullLogon: true, DropConnection: true}, "")
	for _, n := range []string{"/Common/rule", "/Common/both", "/Common/strict"} {
		cfg.Virtuals[n].TLS = clientSSL(t, cert, key)
	}
	cfg.Virtuals["/Common/both"].TLS.Server = serverSSL(t)
	mustApply(t, p, cfg)

	dial := func(t *testing.T, vs string) *fixtest.Client {
		t.Helper()
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", vs, &tls.Config{ServerName: "fix.example", RootCAs: roots})
		if err != nil {
			t.Fatal(err)
		}
		cl := fixtest.NewClient(c)
		t.Cleanup(func() { cl.Close() })
		return cl
	}

	t.Run("rule and tag map inside TLS", func(t *testing.T) {
		c := dial(t, "127.110.2.1:9878")
		c.Send(fixLogon("FIX.4.4", "B-7"))
		recvHas(t, c, "35=A", "49=member-b", "56=B-7")
		c = dial(t, "127.110.2.1:9878")
		c.Send(fixLogon("FIX.4.4", "DESKS"))
		recvHas(t, c, "35=A", "49=member-a", "56=DESKS")
		c.Send(fixOrder("FIX.4.4", "DESKS"))
		if m := recvHas(t, c, "35=8", "10001=desk7"); strings.Contains(m, "20001=") {
			t.Fatalf("the member's tag reached the client: %s", m)
		}
		eventually(t, "the member got the mapped order", func() bool {
			for _, g := range plainA.Messages() {
				if strings.Contains(g, "|49=DESKS|") && strings.Contains(g, "|35=D|") {
					return strings.Contains(g, "|20001=desk7|")
				}
			}
			return false
		})
	})

	t.Run("server-ssl to the member", func(t *testing.T) {
		c := dial(t, "127.110.2.2:9878")
		c.Send(fixLogon("FIX.4.2", "BANZAI"), fixOrder("FIX.4.2", "BANZAI"))
		recvHas(t, c, "35=A", "49=member-tls")
		recvHas(t, c, "35=8", "11=ORD1", "49=member-tls")
		c.Send(fixHeartbeat("FIX.4.2", "BANZAI"))
		eventually(t, "the TLS member got the three messages", func() bool { return len(secure.Messages()) >= 3 })
		if bad := secure.Refused(); len(bad) > 0 {
			t.Fatalf("the member refused %v", bad)
		}
		// The client's close_notify and FIN reach the member, whose close
		// comes back to the client as the end of the stream.
		c.Conn.(*tls.Conn).CloseWrite()
		if _, err := c.Recv(10 * time.Second); err == nil {
			t.Fatal("a message after the close")
		}
	})

	t.Run("malformed inside TLS resets", func(t *testing.T) {
		c := dial(t, "127.110.2.3:9878")
		c.Send(fixLogon("FIX.4.4", "BANZAI"))
		recvHas(t, c, "35=A")
		bad := fixOrder("FIX.4.4", "BANZAI")
		bad[len(bad)-3] ^= 1 // the CheckSum's last digit
		c.Send(bad)
		if m, err := c.Recv(10 * time.Second); err == nil {
			t.Fatalf("got %s after a malformed message under drop-connection", m)
		}
		// The virtual refused it: it never reached the member, which
		// would have refused it itself.
		if bad := plainA.Refused(); len(bad) > 0 {
			t.Fatalf("the malformed message reached the member: %v", bad)
		}
	})
}
