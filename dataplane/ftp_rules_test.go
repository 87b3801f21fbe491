package dataplane

import (
	"bytes"
	"fmt"
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/ftpalg"
)

// TestFTPRules: FTP:: commands in CLIENT_ACCEPTED and SERVER_CONNECTED
// change what the gateway does on that connection, with real transfers
// through the virtual: FTP::port bounds the passive ports the client is
// told, FTP::allow_active_mode disable answers PORT and EPRT 502,
// FTP::ftps_mode require answers the data commands 534 until AUTH (which
// then passes), disallow refuses AUTH on a profile that allows it, and
// FTP::disable passes the control connection untouched (the member's
// own address reaches the client). A rule without FTP:: commands leaves
// the gateway running.
func TestFTPRules(t *testing.T) {
	t.Parallel()
	file := bytes.Repeat([]byte("ftp rules data\n"), 1000)
	member := "127.91.6.30:2121"
	m := startFTPMember(t, member, file)
	m.authEcho = true
	probe, err := ftpalg.Listen(netip.MustParseAddr("127.91.6.1"))
	if err != nil {
		t.Fatal(err)
	}
	first := ftpalg.AddrOf(probe.Addr()).Port()
	probe.Close()
	if first > 65000 {
		first = 41000
	}
	last := first + 3

	p, lg := newPlane(t)
	cfg := basic("127.91.6.1:2121", member)
	cases := []struct {
		name, vs, rule string
		ftps           bool // the profile's allow-ftps
		run            func(t *testing.T, vs string)
	}{
		{"port range", "127.91.6.1:2121", fmt.Sprintf(`when CLIENT_ACCEPTED { FTP::port %d %d }`, first, last), false, func(t *testing.T, vs string) {
			for range 2 {
				cl := ftpClient(t, vs)
				cl.PrintfLine("EPSV")
				_, msg, err := cl.ReadResponse(229)
				port, perr := ftpalg.Parse229(msg)
				if err != nil || perr != nil || port < first || port > last {
					t.Fatalf("EPSV: %q %v %v: want a port in %d-%d", msg, err, perr, first, last)
				}
				cl.PrintfLine("ABOR")
				cl.Close()
				cl = ftpClient(t, vs)
				if got, _ := transfer(t, cl, ap(vs), "PASV", false, nil); !bytes.Equal(got, file) {
					t.Errorf("PASV in the range: %d bytes, want %d", len(got), len(file))
				}
			}
		}},
		{"active off", "127.91.6.2:2121", `when CLIENT_ACCEPTED { if {[FTP::allow_active_mode] eq "enable"} { FTP::allow_active_mode disable } }`, false, func(t *testing.T, vs string) {
			cl := ftpClient(t, vs)
			for _, cmd := range []string{"PORT 127,0,0,1,4,1", "EPRT |1|127.0.0.1|1025|"} {
				cl.PrintfLine("%s", cmd)
				if _, msg, err := cl.ReadResponse(502); err != nil {
					t.Errorf("%s: %v %q, want 502", cmd, err, msg)
				}
			}
			if got, _ := transfer(t, cl, ap(vs), "EPSV", false, nil); !bytes.Equal(got, file) {
				t.Errorf("EPSV with active mode off: %d bytes, want %d", len(got), len(file))
			}
		}},
		{"ftps required", "127.91.6.3:2121", `when SERVER_CONNECTED { FTP::ftps_mode require }`, false, func(t *testing.T, vs string) {
			cl := ftpClient(t, vs)
			for _, cmd := range []string{"PASV", "EPSV", "PORT 127,0,0,1,4,1"} {
				cl.PrintfLine("%s", cmd)
				if _, msg, err := cl.ReadResponse(534); err != nil {
					t.Errorf("%s: %v %q, want 534", cmd, err, msg)
				}
			}
			cl.PrintfLine("AUTH TLS")
			if _, msg, err := cl.ReadResponse(234); err != nil {
				t.Errorf("AUTH TLS: %v %q, want the member's 234", err, msg)
			}
		}},
		{"ftps disallowed", "127.91.6.4:2121", `when CLIENT_ACCEPTED { if {[FTP::ftps_mode] eq "allow"} { FTP::ftps_mode disallow } }`, true, func(t *testing.T, vs string) {
			cl := ftpClient(t, vs)
			cl.PrintfLine("AUTH TLS")
			if _, msg, err := cl.ReadResponse(534); err != nil {
				t.Errorf("AUTH TLS: %v %q, want 534", err, msg)
			}
		}},
		{"disabled", "127.91.6.5:2121", `when CLIENT_ACCEPTED { FTP::disable }`, false, func(t *testing.T, vs string) {
			cl := ftpClient(t, vs)
			cl.PrintfLine("PASV")
			_, msg, err := cl.ReadResponse(227)
			to, perr := ftpalg.Parse227(msg)
			if err != nil || perr != nil || to.Addr() != ap(member).Addr() {
				t.Errorf("PASV: %q %v %v: want the member's own address", msg, err, perr)
			}
		}},
		{"rule without FTP commands", "127.91.6.6:2121", `when CLIENT_ACCEPTED { log local0. "ftp from [IP::client_addr]" }`, false, func(t *testing.T, vs string) {
			cl := ftpClient(t, vs)
			if got, _ := transfer(t, cl, ap(vs), "PASV", false, nil); !bytes.Equal(got, file) {
				t.Errorf("PASV: %d bytes, want %d", len(got), len(file))
			}
		}},
	}
	for i, c := range cases {
		v := basic(c.vs, member).Virtuals["/Common/vs"]
		v.Name = fmt.Sprintf("/Common/vs%d", i)
		v.FTP = &ftpalg.Options{Profile: "/Common/ftp", TranslateExtended: true, AllowFTPS: c.ftps}
		v.Rules, _ = compileRules(t, c.rule)
		cfg.Virtuals[v.Name] = v
	}
	delete(cfg.Virtuals, "/Common/vs")
	mustApply(t, p, cfg)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, c.vs) })
	}
	if s := lg.String(); bytes.Contains([]byte(s), []byte("TCL error")) {
		t.Errorf("rule errors: %s", s)
	}
}
