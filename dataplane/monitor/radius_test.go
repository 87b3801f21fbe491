package monitor

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
)

// radiusServer answers on a loopback UDP socket with the secret given:
// Access-Accept for mon/good, Access-Reject otherwise, and an
// Accounting-Response to a Start; seen gets each request's user and
// NAS-IP-Address.
func radiusServer(t *testing.T, secret string, silent bool) (netip.AddrPort, chan string) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 16)
	srv := &radius.PacketServer{
		SecretSource: radius.StaticSecretSource([]byte(secret)),
		Handler: radius.HandlerFunc(func(w radius.ResponseWriter, r *radius.Request) {
			seen <- rfc2865.UserName_GetString(r.Packet) + " " + rfc2865.NASIPAddress_Get(r.Packet).String()
			if silent {
				return
			}
			switch r.Code {
			case radius.CodeAccessRequest:
				code := radius.CodeAccessReject
				if rfc2865.UserName_GetString(r.Packet) == "mon" && rfc2865.UserPassword_GetString(r.Packet) == "good" {
					code = radius.CodeAccessAccept
				}
				w.Write(r.Response(code))
			case radius.CodeAccountingRequest:
				if rfc2866.AcctStatusType_Get(r.Packet) == rfc2866.AcctStatusType_Value_Start {
					w.Write(r.Response(radius.CodeAccountingResponse))
				}
			}
		}),
	}
	go srv.Serve(pc)
	t.Cleanup(func() { pc.Close() })
	return netip.MustParseAddrPort(pc.LocalAddr().String()), seen
}

func TestProbeRADIUS(t *testing.T) {
	nas := netip.MustParseAddr("192.0.2.7")
	for _, c := range []struct {
		name   string
		typ    Type
		check  *RADIUSCheck
		secret string // the server's
		silent bool
		up     bool
		errSub string
		errIs  error
	}{
		{name: "accepted", typ: RADIUS, check: &RADIUSCheck{Secret: "s3", Username: "mon", Password: "good", NASIP: nas}, secret: "s3", up: true},
		{name: "rejected", typ: RADIUS, check: &RADIUSCheck{Secret: "s3", Username: "mon", Password: "bad", NASIP: nas}, secret: "s3",
			errSub: "Unexpected response: Access-Reject"},
		{name: "wrong secret: the answer does not verify", typ: RADIUS, check: &RADIUSCheck{Secret: "other", Username: "mon", Password: "good"}, secret: "s3",
			errIs: ErrNoResponse},
		{name: "accounting", typ: RADIUSAccounting, check: &RADIUSCheck{Secret: "s3", Username: "mon", NASIP: nas}, secret: "s3", up: true},
		{name: "silent", typ: RADIUS, check: &RADIUSCheck{Secret: "s3", Username: "mon", Password: "good"}, secret: "s3", silent: true,
			errIs: ErrNoResponse},
	} {
		t.Run(c.name, func(t *testing.T) {
			target, seen := radiusServer(t, c.secret, c.silent)
			o, err := probe(t, &Spec{Type: c.typ, RADIUS: c.check}, target, 600*time.Millisecond)
			wantVerdict(t, o, err, c.up, c.errSub, c.errIs)
			if c.secret != c.check.Secret {
				return // the server cannot read a request signed with another secret
			}
			select {
			case got := <-seen:
				want := c.check.Username + " " + net.IP(c.check.NASIP.AsSlice()).String()
				if !c.check.NASIP.IsValid() {
					want = c.check.Username + " <nil>"
				}
				if got != want {
					t.Errorf("the server saw %q, want %q", got, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the server saw no request")
			}
		})
	}
	a, b := &Spec{Type: RADIUS, RADIUS: &RADIUSCheck{Secret: "a"}}, &Spec{Type: RADIUS, RADIUS: &RADIUSCheck{Secret: "b"}}
	if a.Equal(b) || !a.Equal(a) {
		t.Error("Equal does not compare the secrets")
	}
}
