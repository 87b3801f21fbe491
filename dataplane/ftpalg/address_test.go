package ftpalg

import (
	"net/netip"
	"testing"
)

// TestAddressArguments: the PORT, EPRT, 227 and 229 forms read what RFC
// 959 and 2428 allow and refuse the rest.
func TestAddressArguments(t *testing.T) {
	ap := netip.MustParseAddrPort
	for _, c := range []struct {
		name, in string
		parse    func(string) (netip.AddrPort, error)
		want     netip.AddrPort
		err      error
	}{
		{"port", "127,0,228,5,117,48", ParseHostPort, ap("127.0.228.5:30000"), nil},
		{"port spaces", " 10, 1,2,3 ,0,21", ParseHostPort, ap("10.1.2.3:21"), nil},
		{"port short", "127,0,0,1,4", ParseHostPort, netip.AddrPort{}, ErrSyntax},
		{"port byte", "127,0,0,256,4,1", ParseHostPort, netip.AddrPort{}, ErrSyntax},
		{"eprt v4", "|1|127.0.228.5|6446|", ParseEPRT, ap("127.0.228.5:6446"), nil},
		{"eprt v6", "|2|::1|6446|", ParseEPRT, ap("[::1]:6446"), nil},
		{"eprt other delimiter", "!1!10.0.0.1!21!", ParseEPRT, ap("10.0.0.1:21"), nil},
		{"eprt family mismatch", "|1|::1|6446|", ParseEPRT, netip.AddrPort{}, ErrSyntax},
		{"eprt protocol", "|3|10.0.0.1|21|", ParseEPRT, netip.AddrPort{}, ErrProtocol},
		{"eprt port 0", "|1|10.0.0.1|0|", ParseEPRT, netip.AddrPort{}, ErrSyntax},
		{"eprt fields", "|1|10.0.0.1|21", ParseEPRT, netip.AddrPort{}, ErrSyntax},
		{"227", " Entering Passive Mode (127,0,228,11,117,49).", Parse227, ap("127.0.228.11:30001"), nil},
		{"227 bare", " =10,0,0,9,4,1", Parse227, ap("10.0.0.9:1025"), nil},
		{"227 after a number", " Mode 2 (10,0,0,9,4,1)", Parse227, ap("10.0.0.9:1025"), nil},
		{"227 none", " Entering Passive Mode", Parse227, netip.AddrPort{}, ErrSyntax},
	} {
		got, err := c.parse(c.in)
		if got != c.want || err != c.err {
			t.Errorf("%s: %q gave %v, %v; want %v, %v", c.name, c.in, got, err, c.want, c.err)
		}
	}
}

// TestParse229: the port of an extended passive answer, any delimiter.
func TestParse229(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint16
		err  error
	}{
		{" Entering Extended Passive Mode (|||6446|)", 6446, nil},
		{" ok (!!!21!)", 21, nil},
		{" Entering Extended Passive Mode (|||0|)", 0, ErrSyntax},
		{" Entering Extended Passive Mode (||6446|)", 0, ErrSyntax},
		{" Entering Extended Passive Mode", 0, ErrSyntax},
		{" (|||6446|", 0, ErrSyntax},
	} {
		got, err := Parse229(c.in)
		if got != c.want || err != c.err {
			t.Errorf("%q gave %d, %v; want %d, %v", c.in, got, err, c.want, c.err)
		}
	}
}

// TestFormat: what the gateway writes reads back.
func TestFormat(t *testing.T) {
	for _, s := range []string{"127.0.228.1:30000", "10.0.0.1:20", "[::ffff:10.0.0.1]:21"} {
		a := netip.MustParseAddrPort(s)
		a = netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
		if got, err := ParseHostPort(FormatHostPort(a)); got != a || err != nil {
			t.Errorf("%s: PORT form %q reads %v, %v", s, FormatHostPort(a), got, err)
		}
		if got, err := ParseEPRT(FormatEPRT(a)); got != a || err != nil {
			t.Errorf("%s: EPRT form %q reads %v, %v", s, FormatEPRT(a), got, err)
		}
	}
	if got := FormatEPRT(netip.MustParseAddrPort("[::1]:2121")); got != "|2|::1|2121|" {
		t.Errorf("EPRT v6 %q", got)
	}
}
