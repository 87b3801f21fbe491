package daemon

import (
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/ipfix/ipfixtest"
)

// netflowSetup makes the collectors' pool, an ipfix destination, a
// publisher and a member for the netflow tests.
func netflowSetup(t *testing.T, s *Session, collector, member string) {
	t.Helper()
	labelServer(t, member, "NF Response")
	mustRun(t, s,
		"create ltm pool nf_app members add { "+member+" }",
		"create ltm pool nf_collectors members add { "+collector+" }",
		"create sys log-config destination ipfix nf_dest pool-name nf_collectors",
		"create sys log-config publisher nf_pub destinations replace-all-with { nf_dest }",
	)
}

// v5Flow is one NetFlow v5 record's fields a test checks.
type v5Flow struct {
	src, dst     netip.AddrPort
	proto        byte
	pkts, octets uint32
	first, last  uint32
}

func readV5(r ipfixtest.Rec) v5Flow {
	f := r.Fields
	return v5Flow{
		src:    netip.AddrPortFrom(netip.AddrFrom4([4]byte(f[0])), binary.BigEndian.Uint16(f[9])),
		dst:    netip.AddrPortFrom(netip.AddrFrom4([4]byte(f[1])), binary.BigEndian.Uint16(f[10])),
		proto:  f[13][0],
		pkts:   binary.BigEndian.Uint32(f[5]),
		octets: binary.BigEndian.Uint32(f[6]),
		first:  binary.BigEndian.Uint32(f[7]),
		last:   binary.BigEndian.Uint32(f[8]),
	}
}

// TestNetflowProfileTCP: a standard virtual with the built-in netflow
// profile (NetFlow v5) reports each connection as two records, the
// client's octets to the virtual and the virtual's answer back; a
// virtual without the profile reports nothing. version-9 and ipfix then
// send templates and records the collector decodes alike.
func TestNetflowProfileTCP(t *testing.T) {
	_, s := publisherEngine(t)
	c, _ := ipfixtest.UDP(t, "127.149.1.30:2055")
	netflowSetup(t, s, "127.149.1.30:2055", "127.149.1.21:9000")
	mustRun(t, s,
		"create ltm profile netflow nf defaults-from netflow log-publisher nf_pub",
		"create ltm virtual nf_vs destination 127.149.1.20:9000 pool nf_app source-address-translation { type automap } profiles replace-all-with { tcp nf }",
		"create ltm virtual plain_vs destination 127.149.1.22:9000 pool nf_app source-address-translation { type automap } profiles replace-all-with { tcp }",
	)
	if a := askVS(t, "127.149.1.22:9000", "nobody"); a != "NF Response" {
		t.Fatalf("plain virtual answered %q", a)
	}
	if a := askVS(t, "127.149.1.20:9000", "hello"); a != "NF Response" {
		t.Fatalf("virtual answered %q", a)
	}
	eventually(t, 10*time.Second, "2 v5 records", func() bool {
		m, _ := c.Snapshot()
		return ipfixtest.Records(m) >= 2
	})
	time.Sleep(300 * time.Millisecond) // a record of the plain virtual would be out by now
	msgs, errs := c.Snapshot()
	if len(errs) > 0 || ipfixtest.Records(msgs) != 2 {
		t.Fatalf("errors %v, %d records", errs, ipfixtest.Records(msgs))
	}
	var got []v5Flow
	for _, m := range msgs {
		if m.Version != 5 {
			t.Fatalf("version %d", m.Version)
		}
		for _, r := range m.Records {
			got = append(got, readV5(r))
		}
	}
	up, down := got[0], got[1]
	if up.src.Addr().String() != "127.0.0.1" || up.dst.String() != "127.149.1.20:9000" || up.proto != 6 {
		t.Errorf("client flow %+v", up)
	}
	if down.dst != up.src || down.src != up.dst {
		t.Errorf("answer flow %+v, client flow %+v", down, up)
	}
	if up.octets != uint32(len("hello\n")) || down.octets != uint32(len("NF Response\n")) || up.pkts == 0 || down.pkts == 0 {
		t.Errorf("octets %d/%d, packets %d/%d", up.octets, down.octets, up.pkts, down.pkts)
	}
	if up.first > up.last || up.last == 0 {
		t.Errorf("first %d last %d", up.first, up.last)
	}
	out, _ := run(t, s, "show ltm profile netflow nf")
	if !strings.Contains(out, "Flows Reported") || !strings.Contains(out, "Records Sent") {
		t.Errorf("show ltm profile netflow:\n%s", out)
	}

	// IPFIX records end with the virtual's name (F5's contextName).
	for _, v := range []struct {
		setting string
		version uint16
		fields  int
	}{{"version-9", 9, 9}, {"ipfix", 10, 10}} {
		n := ipfixtest.Records(msgs)
		mustRun(t, s, "modify ltm profile netflow nf netflow-version "+v.setting)
		askVS(t, "127.149.1.20:9000", "again")
		eventually(t, 10*time.Second, v.setting+" records", func() bool {
			m, _ := c.Snapshot()
			return ipfixtest.Records(m) >= n+2
		})
		msgs, errs = c.Snapshot()
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		last := msgs[len(msgs)-1]
		if last.Version != v.version || len(last.Records) == 0 {
			t.Fatalf("%s: message %+v", v.setting, last)
		}
		r := last.Records[len(last.Records)-1]
		if len(r.Fields) != v.fields || netip.AddrFrom4([4]byte(r.Fields[0])).String() != "127.149.1.20" || binary.BigEndian.Uint64(r.Fields[5]) != uint64(len("NF Response\n")) {
			t.Fatalf("%s: answer record %x", v.setting, r.Fields)
		}
		if at := int64(binary.BigEndian.Uint64(r.Fields[8])); time.Since(time.UnixMilli(at)).Abs() > time.Hour {
			t.Errorf("%s: flowEndMilliseconds %d", v.setting, at)
		}
		if v.fields == 10 && string(r.Fields[9]) != "/Common/nf_vs" {
			t.Errorf("%s: contextName %q, want the virtual's name", v.setting, r.Fields[9])
		}
	}

	// sys ipfix destination: the destination's exporters' counters, in
	// every version sent through it (v5, v9, IPFIX: 6 records).
	out, err := run(t, s, "show sys ipfix destination nf_dest")
	if err != "" || !regexp.MustCompile(`Sys::IPFIX Destination: nf_dest(?s:.*)Sent +6\n`).MatchString(out) {
		t.Fatalf("show sys ipfix destination: %s %s", out, err)
	}
	mustRun(t, s, "reset-stats sys ipfix destination")
	if out, _ := run(t, s, "show sys ipfix destination"); !regexp.MustCompile(`Sent +0\n`).MatchString(out) {
		t.Errorf("after reset-stats: %s", out)
	}
	if _, err := run(t, s, "show sys ipfix destination no_such"); !strings.Contains(err, "no_such") {
		t.Errorf("an unknown destination: %q", err)
	}
}

// TestNetflowProfileUDP: a UDP virtual's flow is reported when its idle
// timeout ends it: the datagrams each way counted as packets.
func TestNetflowProfileUDP(t *testing.T) {
	t.Parallel()
	_, s := publisherEngine(t)
	c, _ := ipfixtest.UDP(t, "127.149.2.30:2055")
	udpEcho(t, "127.149.2.21:7000")
	mustRun(t, s,
		"create ltm pool nf_echo members add { 127.149.2.21:7000 }",
		"create ltm pool nf_collectors members add { 127.149.2.30:2055 }",
		"create sys log-config destination ipfix nf_dest pool-name nf_collectors",
		"create sys log-config publisher nf_pub destinations replace-all-with { nf_dest }",
		"create ltm profile udp udp_short defaults-from udp idle-timeout 1",
		"create ltm profile netflow nf defaults-from netflow log-publisher nf_pub",
		"create ltm virtual nf_udp destination 127.149.2.20:7000 ip-protocol udp pool nf_echo profiles replace-all-with { udp_short nf }",
	)
	conn, err := net.Dial("udp", "127.149.2.20:7000")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	buf := make([]byte, 64)
	for _, m := range []string{"one", "two", "three"} {
		conn.SetDeadline(time.Now().Add(3 * time.Second))
		conn.Write([]byte(m))
		if n, err := conn.Read(buf); err != nil || string(buf[:n]) != m {
			t.Fatalf("echo %q: %q %v", m, buf[:n], err)
		}
	}
	eventually(t, 15*time.Second, "the UDP flow's records", func() bool {
		m, _ := c.Snapshot()
		return ipfixtest.Records(m) >= 2
	})
	msgs, _ := c.Snapshot()
	up, down := readV5(msgs[0].Records[0]), readV5(msgs[len(msgs)-1].Records[len(msgs[len(msgs)-1].Records)-1])
	if up.proto != 17 || up.dst.String() != "127.149.2.20:7000" || up.src.String() != conn.LocalAddr().String() {
		t.Errorf("client flow %+v", up)
	}
	if up.pkts != 3 || down.pkts != 3 || up.octets != 11 || down.octets != 11 {
		t.Errorf("packets %d/%d octets %d/%d", up.pkts, down.pkts, up.octets, down.octets)
	}
}

// TestNetflowProfileConfig: a log-publisher that does not exist is
// refused; one without an ipfix destination, or none, is kept with a
// warning.
func TestNetflowProfileConfig(t *testing.T) {
	_, s := publisherEngine(t)
	if _, err := run(t, s, "create ltm profile netflow bad netflow-version version-7"); !strings.Contains(err, "version-7") {
		t.Errorf("netflow-version version-7: %q", err)
	}
	out, _ := run(t, s, "list ltm profile netflow netflow all-properties")
	if !strings.Contains(out, "netflow-version version-5") {
		t.Errorf("built-in netflow:\n%s", out)
	}
	mustRun(t, s, "create ltm profile netflow nf_none defaults-from netflow")
	out, err := run(t, s, "create ltm virtual v_none destination 127.149.3.20:80 profiles replace-all-with { tcp nf_none }")
	if err != "" || !strings.Contains(out+err, "no log-publisher") {
		t.Errorf("profile without a publisher: %q %q", out, err)
	}
}

// TestNetflowProfileHTTP: an http virtual's client connection is
// reported when it closes, with the requests and answers it carried.
func TestNetflowProfileHTTP(t *testing.T) {
	_, s := publisherEngine(t)
	c, _ := ipfixtest.UDP(t, "127.149.4.30:2055")
	ln, err := net.Listen("tcp", "127.149.4.21:8080")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page") })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	mustRun(t, s,
		"create ltm pool nf_web members add { 127.149.4.21:8080 }",
		"create ltm pool nf_collectors members add { 127.149.4.30:2055 }",
		"create sys log-config destination ipfix nf_dest pool-name nf_collectors",
		"create sys log-config publisher nf_pub destinations replace-all-with { nf_dest }",
		"create ltm profile netflow nf defaults-from netflow log-publisher nf_pub",
		"create ltm virtual nf_http destination 127.149.4.20:80 pool nf_web source-address-translation { type automap } profiles replace-all-with { tcp http nf }",
	)
	tr := &http.Transport{}
	cl := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for range 2 {
		resp, err := cl.Get("http://127.149.4.20/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "page" {
			t.Fatalf("body %q", body)
		}
	}
	tr.CloseIdleConnections()
	eventually(t, 10*time.Second, "the http connection's records", func() bool {
		m, _ := c.Snapshot()
		return ipfixtest.Records(m) >= 2
	})
	msgs, _ := c.Snapshot()
	if n := ipfixtest.Records(msgs); n != 2 {
		t.Fatalf("%d records for one connection", n)
	}
	up := readV5(msgs[0].Records[0])
	if up.dst.String() != "127.149.4.20:80" || up.proto != 6 || up.octets == 0 || up.pkts < 2 {
		t.Errorf("client flow %+v", up)
	}
}
