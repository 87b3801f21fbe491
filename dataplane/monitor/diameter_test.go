package monitor

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// cerSeen describes a CER as the fake peer read it.
func cerSeen(m *diamMsg) string {
	u := func(code uint32) string {
		if v, ok := m.avps[code]; ok && len(v) == 4 {
			return fmt.Sprint(binary.BigEndian.Uint32(v))
		}
		return "-"
	}
	ip := m.avps[avpHostIPAddress]
	a, _ := netip.AddrFromSlice(ip[min(2, len(ip)):])
	var vs string
	if g, ok := m.avps[avpVendorSpecificApp]; ok {
		inner, err := readDiameter(bytes.NewReader(diamMessage(0, 0, 0, 0, g)))
		if err == nil {
			vs = fmt.Sprintf(" vs=%s/%s/%s", u2(inner.avps[avpVendorID]), u2(inner.avps[avpAuthAppID]), u2(inner.avps[avpAcctAppID]))
		}
	}
	return fmt.Sprintf("cmd=%d req=%v host=%s realm=%s ip=%s vendor=%s product=%q auth=%s acct=%s%s", m.code, m.flags&diamRequest != 0,
		m.avps[avpOriginHost], m.avps[avpOriginRealm], a, u(avpVendorID), m.avps[avpProductName], u(avpAuthAppID), u(avpAcctAppID), vs)
}

func u2(v []byte) string {
	if len(v) != 4 {
		return "-"
	}
	return fmt.Sprint(binary.BigEndian.Uint32(v))
}

// fakePeer reads a CER per connection and writes what answer makes of
// it (nil: closes the connection); seen gets the CER and then the
// command that followed the answer (282, the DPR), or 0.
func fakePeer(t *testing.T, answer func(cer *diamMsg) []byte) (netip.AddrPort, chan string) {
	t.Helper()
	seen := make(chan string, 8)
	target, err := echoServer(t, "127.0.0.1:0", func(c net.Conn) {
		cer, err := readDiameter(c)
		if err != nil {
			seen <- "unreadable: " + err.Error()
			return
		}
		a := answer(cer)
		if a == nil {
			return
		}
		c.Write(a)
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		next := uint32(0)
		if m, err := readDiameter(c); err == nil {
			next = m.code
		}
		seen <- cerSeen(cer) + fmt.Sprintf(" then=%d", next)
	})
	if err != nil {
		t.Fatal(err)
	}
	return target, seen
}

// cea answers a CER with code (0: no Result-Code) and an Error-Message
// when msg is set; hbhDelta moves the hop-by-hop identifier off the
// request's.
func cea(code uint32, msg string, hbhDelta uint32) func(*diamMsg) []byte {
	return func(cer *diamMsg) []byte {
		var b []byte
		if code != 0 {
			b = appendAVP(b, avpResultCode, avpMandatory, 0, u32(code))
		}
		b = appendAVP(b, avpOriginHost, avpMandatory, 0, []byte("peer.example"))
		b = appendAVP(b, avpOriginRealm, avpMandatory, 0, []byte("example"))
		b = appendAVP(b, 1234, avpMandatory, 10415, []byte("vendor AVP")) // skipped
		if msg != "" {
			b = appendAVP(b, avpErrorMessage, 0, 0, []byte(msg))
		}
		return diamMessage(0, diamCER, cer.hopByHop+hbhDelta, 7, b)
	}
}

func TestProbeDiameter(t *testing.T) {
	watchdogFirst := func(cer *diamMsg) []byte {
		dwr := diamMessage(diamRequest, 280, 99, 99, appendAVP(nil, avpOriginHost, avpMandatory, 0, []byte("peer.example")))
		return append(dwr, cea(2001, "", 0)(cer)...)
	}
	full := &DiameterCheck{OriginHost: "ltm.example.com", OriginRealm: "example.com", HostIP: netip.MustParseAddr("192.0.2.9"),
		VendorID: 3375, ProductName: "F5 BIGIP Diameter Health Monitoring", AuthAppIDs: []uint32{4}, AcctAppIDs: []uint32{3},
		VSVendorID: 10415, VSAuthAppIDs: []uint32{16777251}}
	for _, c := range []struct {
		name     string
		check    *DiameterCheck
		answer   func(*diamMsg) []byte
		deadline time.Duration
		up       bool
		seen     string
		errSub   string
		errIs    error
	}{
		{name: "success", check: full, answer: cea(2001, "", 0), up: true,
			seen: `cmd=257 req=true host=ltm.example.com realm=example.com ip=192.0.2.9 vendor=3375 product="F5 BIGIP Diameter Health Monitoring" auth=4 acct=3 vs=10415/16777251/- then=282`},
		{name: "defaults: the connection's address", check: &DiameterCheck{OriginHost: "mon", VendorID: 3375}, answer: cea(2001, "", 0), up: true,
			seen: `cmd=257 req=true host=mon realm=f5 ip=127.0.0.1 vendor=3375 product="" auth=- acct=- then=282`},
		{name: "a watchdog first", check: full, answer: watchdogFirst, up: true},
		{name: "refused", check: full, answer: cea(5010, "no common application", 0),
			errSub: "Result-Code 5010 (DIAMETER_NO_COMMON_APPLICATION no common application)"},
		{name: "unknown code", check: full, answer: cea(4999, "", 0), errSub: "Result-Code 4999 ()"},
		{name: "no Result-Code", check: full, answer: cea(0, "", 0), errSub: "without a Result-Code"},
		{name: "answer to another request", check: full, answer: cea(2001, "", 1), errSub: "Unexpected response: Diameter command 257"},
		{name: "not Diameter", check: full, answer: func(*diamMsg) []byte { return []byte("HTTP/1.1 400 Bad Request\r\n\r\n") },
			errSub: "Response is not a Diameter message (version 72"},
		{name: "closed", check: full, answer: func(*diamMsg) []byte { return nil }, errSub: "Connection closed before the Capabilities-Exchange-Answer"},
		{name: "silent", check: full, answer: func(*diamMsg) []byte { time.Sleep(time.Second); return nil },
			deadline: 300 * time.Millisecond, errIs: ErrNoResponse},
	} {
		t.Run(c.name, func(t *testing.T) {
			target, seen := fakePeer(t, c.answer)
			d := c.deadline
			if d == 0 {
				d = 5 * time.Second
			}
			o, err := probe(t, &Spec{Type: Diameter, Diameter: c.check}, target, d)
			wantVerdict(t, o, err, c.up, c.errSub, c.errIs)
			if c.seen == "" {
				return
			}
			select {
			case got := <-seen:
				if got != c.seen {
					t.Errorf("peer saw\n%s\nwant\n%s", got, c.seen)
				}
			case <-time.After(5 * time.Second):
				t.Error("the peer saw no CER")
			}
		})
	}
	t.Run("refused connection", func(t *testing.T) {
		o, err := probe(t, &Spec{Type: Diameter}, closedPort(t, "127.0.0.1:0"), 5*time.Second)
		wantVerdict(t, o, err, false, "Unable to connect", nil)
	})
}

func TestDiameterEncoding(t *testing.T) {
	// RFC 6733 §4.1: code, flags, 24-bit length without the padding, data
	// padded to 32 bits; a vendor AVP carries its Vendor-Id.
	for _, c := range []struct {
		code   uint32
		flags  byte
		vendor uint32
		data   string
		want   string
	}{
		{264, avpMandatory, 0, "a.b", "00000108 4000000b 612e6200"},
		{266, avpMandatory, 0, "\x00\x00\x0d\x2f", "0000010a 4000000c 00000d2f"},
		{1, 0, 10415, "xy", "00000001 8000000e 000028af 78790000"},
	} {
		got := hex.EncodeToString(appendAVP(nil, c.code, c.flags, c.vendor, []byte(c.data)))
		if want := strings.ReplaceAll(c.want, " ", ""); got != want {
			t.Errorf("AVP %d: %s, want %s", c.code, got, want)
		}
	}
	m := diamMessage(diamRequest, diamCER, 0x01020304, 0x05060708, appendAVP(nil, 264, avpMandatory, 0, []byte("a.b")))
	if got := hex.EncodeToString(m[:20]); got != "010000208000010100000000010203040506070"+"8" {
		t.Errorf("header %s", got)
	}
	for _, c := range []struct {
		check *DiameterCheck
		err   string
	}{
		{&DiameterCheck{}, ""},
		{&DiameterCheck{OriginHost: "two words"}, `origin-host "two words" is not a host name`},
		{&DiameterCheck{VSAuthAppIDs: []uint32{1}}, "need vendor-specific-vendor-id"},
		{&DiameterCheck{VSVendorID: 10415}, "vendor-specific-vendor-id needs"},
		{&DiameterCheck{VSVendorID: 10415, VSAcctAppIDs: []uint32{3}}, ""},
	} {
		err := c.check.check()
		if (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: check() = %v, want %q", c.check, err, c.err)
		}
	}
}
