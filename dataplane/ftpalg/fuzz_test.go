package ftpalg

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzControl drives the gateway with arbitrary control lines from both
// ends, and the address parsers with arbitrary text: none may panic.
func FuzzControl(f *testing.F) {
	f.Add("PASV", "227 Entering Passive Mode (10,0,0,1,4,1)", true, true)
	f.Add("EPSV", "229 Entering Extended Passive Mode (|||1025|)", false, true)
	f.Add("PORT 10,0,0,2,4,2", "200 PORT command successful", true, false)
	f.Add("EPRT |2|::1|1026|", "200-a\r\n200 b", false, false)
	f.Add("AUTH TLS", "234 ok", true, true)
	f.Fuzz(func(t *testing.T, fromClient, fromMember string, translate, v4 bool) {
		c := NewControl(Options{TranslateExtended: translate, AllowFTPS: true}, v4, true)
		for _, l := range strings.Split(fromClient, "\n") {
			c.FromClient(l + "\r\n")
			c.ActiveCommand(netip.MustParseAddrPort("10.0.0.9:2020"))
		}
		for _, l := range strings.Split(fromMember, "\n") {
			c.FromMember(l + "\r\n")
			c.PassiveAnswer(netip.MustParseAddrPort("192.0.2.1:3030"))
		}
		ParseHostPort(fromClient)
		ParseEPRT(fromClient)
		Parse227(fromMember)
		Parse229(fromMember)
	})
}
