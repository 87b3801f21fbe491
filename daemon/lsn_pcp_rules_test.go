package daemon

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLSNPoolPCPRule: the pcp profile's rule runs in the PCP server.
// PCP_REQUEST reads the request and PCP::reject answers it with the
// rule's code, nothing mapped; PCP_RESPONSE sees every answer; show
// ltm lsn-pool counts the refusals. A rule with neither event is kept
// with a warning, and so is one using an unsupported command; taking
// the rule away maps what it refused.
func TestLSNPoolPCPRule(t *testing.T) {
	dir := t.TempDir()
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create net vlan internal",
		"create net self pcp_self address 127.172.0.1/16 vlan internal allow-service { udp:5351 }",
		`create ltm rule pcp_guard {
when PCP_REQUEST {
    if { [PCP::request opcode] eq "map" && [PCP::request internal-port] < 1024 } {
        PCP::reject 2
    }
}
when PCP_RESPONSE {
    log local0. "answer [PCP::response opcode] [PCP::response internal-port] result [PCP::response result] to [IP::client_addr]"
}
}`,
		"create ltm profile pcp guard_pcp defaults-from pcp rule pcp_guard",
		"create ltm lsn-pool cg members add { 127.172.10.0/30 } translation-port-range 40000:40999 pcp { profile guard_pcp selfip pcp_self }",
	)
	server := "127.172.0.1:5351"
	sub := netip.MustParseAddr("127.172.1.5")
	src := "127.172.1.5:0"
	mapReq := func(port uint16) pcpReq {
		return pcpReq{version: 2, opcode: 1, lifetime: 300, client: sub, nonce: [12]byte{5}, proto: 6, internalPort: port}
	}
	if a := pcpAsk(t, src, server, mapReq(22)); a.result != 2 || a.ext.Port() != 0 && a.ext.Addr().IsValid() && !a.ext.Addr().IsUnspecified() {
		t.Fatalf("MAP of port 22: %+v, want NOT_AUTHORIZED (2) and nothing assigned", a)
	}
	if a := pcpAsk(t, src, server, mapReq(8080)); a.result != 0 || a.ext.Port() < 40000 {
		t.Fatalf("MAP of port 8080: %+v, want SUCCESS", a)
	}
	out, _ := run(t, s, "show ltm lsn-pool cg")
	if showField(out, "PCP", "Rejected by iRule") != "1" || showField(out, "PCP", "MAP Mappings") != "1" || showField(out, "PCP", "Errors Returned") != "1" {
		t.Errorf("show:\n%s", out)
	}
	lsnEventually(t, "the PCP_RESPONSE log lines", func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "log", "ltm"))
		for _, want := range []string{
			"Rule /Common/pcp_guard <PCP_RESPONSE>: answer map 22 result 2 to 127.172.1.5",
			"Rule /Common/pcp_guard <PCP_RESPONSE>: answer map 8080 result 0 to 127.172.1.5",
		} {
			if !strings.Contains(string(b), want) {
				return "missing " + want + " in:\n" + string(b)
			}
		}
		return ""
	})

	// A rule without the PCP events, or one F5 commands openltm lacks
	// keep inert: kept with a warning.
	runAll(t, s, "create ltm rule not_pcp { when CLIENT_ACCEPTED { log local0. x } }")
	if out, err := run(t, s, "modify ltm profile pcp guard_pcp rule not_pcp"); err != "" || !strings.Contains(out, "no PCP_REQUEST or PCP_RESPONSE event") {
		t.Errorf("a rule without PCP events: %q %q", out, err)
	}
	runAll(t, s, "create ltm rule pcp_unsup { when PCP_REQUEST { log local0. [DSLITE::remote_addr] } }")
	if out, err := run(t, s, "modify ltm profile pcp guard_pcp rule pcp_unsup"); err != "" || !strings.Contains(out, "does not implement yet: the PCP server runs without it") {
		t.Errorf("a rule with an unsupported command: %q %q", out, err)
	}
	// Without the rule, port 22 maps.
	runAll(t, s, "modify ltm profile pcp guard_pcp rule none")
	if a := pcpAsk(t, src, server, mapReq(22)); a.result != 0 {
		t.Errorf("MAP of port 22 without the rule: %+v", a)
	}
}

// TestLSNPoolPCPOneServerPerAddress: two lsn pools whose PCP servers
// would listen on one self IP and port are refused, and nothing
// changes; another listening-port is taken.
func TestLSNPoolPCPOneServerPerAddress(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create net vlan internal",
		"create net self pcp_self2 address 127.172.0.2/16 vlan internal allow-service { udp:5351 udp:5352 }",
		"create ltm profile pcp other_port defaults-from pcp listening-port 5352",
		"create ltm lsn-pool a members add { 127.172.11.0/30 } pcp { profile pcp selfip pcp_self2 }",
	)
	_, err := run(t, s, "create ltm lsn-pool b members add { 127.172.12.0/30 } pcp { profile pcp selfip pcp_self2 }")
	if !strings.Contains(err, "LSN pool (/Common/b): its PCP server on 127.172.0.2:5351 is LSN pool (/Common/a)'s") {
		t.Fatalf("second pool on one self IP: %q", err)
	}
	if out, _ := run(t, s, "list ltm lsn-pool b"); strings.Contains(out, "lsn-pool b") {
		t.Errorf("the refused pool exists: %s", out)
	}
	runAll(t, s, "create ltm lsn-pool b members add { 127.172.12.0/30 } pcp { profile other_port selfip pcp_self2 }")
	sub := netip.MustParseAddr("127.172.1.6")
	for _, server := range []string{"127.172.0.2:5351", "127.172.0.2:5352"} {
		if a := pcpAsk(t, "127.172.1.6:0", server, pcpReq{version: 2, opcode: 0, client: sub}); a.result != 0 {
			t.Errorf("ANNOUNCE to %s: %+v", server, a)
		}
	}
}

// TestLSNPoolSAPicked: SA_PICKED runs once the pool gave the flow its
// translation: XLAT::src_addr and src_port there are what the member
// sees; a reject there resets the client and gives the translation back.
func TestLSNPoolSAPicked(t *testing.T) {
	dir := t.TempDir()
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	fromMember(t, "127.172.0.170:9000", fromHostPort, true)
	runAll(t, s,
		"create ltm pool p members add { 127.172.0.170:9000 }",
		"create ltm lsn-pool a members add { 127.172.40.0/30 }",
		`create ltm rule picked { when SA_PICKED {
    if { [IP::client_addr] eq "127.172.1.90" } { reject ; return }
    log local0. "picked [XLAT::src_addr]:[XLAT::src_port] [XLAT::src_config]"
} }`,
		"create ltm virtual v destination 127.172.0.70:9000 pool p rules { picked } source-address-translation { type lsn pool a } profiles replace-all-with { tcp { } }",
	)
	c := mustLSNDial(t, "127.172.1.89:0", "127.172.0.70:9000")
	inPrefix(t, c.seen, "127.172.40.0/30", 1025, 65535)
	lsnEventually(t, "the SA_PICKED log line", func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "log", "ltm"))
		if want := "Rule /Common/picked <SA_PICKED>: picked " + c.seen.String() + " LSN /Common/a"; !strings.Contains(string(b), want) {
			return "missing " + want + " in:\n" + string(b)
		}
		return ""
	})
	c.c.Close()
	if c, err := lsnDial(t, "127.172.1.90:0", "127.172.0.70:9000"); err == nil {
		t.Fatalf("rejected in SA_PICKED, yet the member saw %s", c.seen)
	}
	lsnShowEventually(t, s, "every translation given back", "a", "Translations", "Active", "0")
}
