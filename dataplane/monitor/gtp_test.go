package monitor

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/gtpmsg"
)

// gtpPeer answers every GTP Echo Request on addr with an Echo Response
// of the request's version and sequence number, or, with version set,
// claims that version; it stops with the test.
func gtpPeer(t *testing.T, addr string, version byte) netip.AddrPort {
	t.Helper()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Skipf("no loopback UDP socket on %s: %v", addr, err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if n < 8 || buf[1] != gtpmsg.EchoRequest {
				continue
			}
			resp := append([]byte(nil), buf[:n]...)
			resp[1] = gtpmsg.EchoResponse
			if version != 0 {
				resp[0] = resp[0]&0x1f | version<<5
			}
			pc.WriteTo(resp, from)
		}
	}()
	return netip.MustParseAddrPort(pc.LocalAddr().String())
}

// The gtp monitor's Echo Request is answered by a GTP peer of its
// version; another version's answer, or a closed port, is down.
func TestProbeGTP(t *testing.T) {
	peer := gtpPeer(t, "127.114.3.11:0", 0)
	v1Only := gtpPeer(t, "127.114.3.12:0", 1)
	closed := func() netip.AddrPort {
		pc, err := net.ListenPacket("udp", "127.114.3.13:0")
		if err != nil {
			t.Skip(err)
		}
		defer pc.Close()
		return netip.MustParseAddrPort(pc.LocalAddr().String())
	}()
	for _, tc := range []struct {
		name    string
		version int
		target  netip.AddrPort
		up      bool
		err     error // when down: this error, or any when nil
	}{
		{"GTPv1 echo", 1, peer, true, nil},
		{"GTPv2 echo", 2, peer, true, nil},
		{"GTPv2 answered as GTPv1", 2, v1Only, false, nil},
		{"nothing listening", 1, closed, false, ErrPortUnreachable},
	} {
		spec := &Spec{Type: GTP, Interval: time.Second, Timeout: 5 * time.Second, GTPVersion: tc.version}
		if err := spec.Check(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		o, err := Probe(ctx, spec, tc.target)
		cancel()
		if o.Up != tc.up || (tc.up && err != nil) || (!tc.up && err == nil) {
			t.Errorf("%s: up %v err %v, want up %v", tc.name, o.Up, err, tc.up)
		}
		if tc.err != nil && !errors.Is(err, tc.err) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.err)
		}
	}
	if err := (&Spec{Type: GTP, GTPVersion: 3}).Check(); err == nil {
		t.Error("protocol-version 3 must be refused")
	}
}

// The requests are the ones TS 29.060 and 29.274 define: GTPv1-C with
// its sequence number, GTPv2-C with a Recovery IE.
func TestGTPEchoRequest(t *testing.T) {
	for _, tc := range []struct {
		version int
		want    []byte
	}{
		{1, []byte{0x32, 1, 0, 4, 0, 0, 0, 0, 0x12, 0x34, 0, 0}},
		{2, []byte{0x40, 1, 0, 9, 0x56, 0x12, 0x34, 0, 3, 0, 1, 0, 0}},
	} {
		got := gtpmsg.Echo(tc.version, 0x561234)
		if string(got) != string(tc.want) {
			t.Errorf("GTPv%d Echo Request % x, want % x", tc.version, got, tc.want)
		}
	}
}
