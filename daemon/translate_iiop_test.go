package daemon

import (
	"crypto/tls"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/iiop"
	"github.com/openltm/openltm/dataplane/iiop/iioptest"
	"github.com/openltm/openltm/dataplane/mblb"
)

// IIOP tests listen on 127.243.2.0/24, ports 24400-24499.

// iiopRound sends reqs in one write on c and returns "id=body" for each
// of the n replies, in the order they came.
func iiopRound(t *testing.T, c net.Conn, reqs []byte, n int) []string {
	t.Helper()
	if _, err := c.Write(reqs); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var got []string
	for range n {
		b, err := iioptest.ReadMessage(c)
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		m, err := iiop.Parse(b)
		if err != nil || m.Type != iiop.Reply {
			t.Fatalf("%v %v", m.Type, err)
		}
		got = append(got, fmt.Sprintf("%d=%s", m.RequestID, iiop.ReplyBody(b)))
	}
	return got
}

// TestIIOPVirtual: a TCP virtual with the iiop profile, through the
// dataplane to two GIOP members: pipelined requests of one client
// alternate between the members, the reply the first member keeps
// longest comes back last with its own request id; with
// persist-object-key every request for a key goes to one member; a
// request unanswered within timeout resets the client
// (abort-on-timeout).
func TestIIOPVirtual(t *testing.T) {
	t.Parallel()
	var members []*iioptest.Server
	for i, a := range []string{"127.243.2.1:24401", "127.243.2.2:24402"} {
		s, err := iioptest.Listen(a, fmt.Sprintf("m%d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		members = append(members, s)
	}
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p_iiop members add { 127.243.2.1:24401 127.243.2.2:24402 }",
		"create ltm profile iiop iiop_keys defaults-from iiop persist-object-key enabled",
		"create ltm profile iiop iiop_quick defaults-from iiop timeout 1",
		"create ltm virtual v_iiop destination 127.243.2.10:24410 pool p_iiop profiles replace-all-with { tcp { } iiop { } }",
		"create ltm virtual v_keys destination 127.243.2.11:24411 pool p_iiop profiles replace-all-with { tcp { } iiop_keys { } }",
		"create ltm virtual v_quick destination 127.243.2.12:24412 pool p_iiop profiles replace-all-with { tcp { } iiop_quick { } }",
	} {
		if out, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	dial := func(addr string) net.Conn {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	c := dial("127.243.2.10:24410")
	var reqs []byte
	reqs = iiop.AppendRequest(reqs, 2, false, 101, true, []byte("acct"), "delay:300", nil)
	for id := uint32(102); id <= 104; id++ {
		reqs = iiop.AppendRequest(reqs, 2, false, id, true, []byte("acct"), "get", nil)
	}
	got := iiopRound(t, c, reqs, 4)
	if !strings.HasPrefix(got[3], "101=") {
		t.Fatalf("the slow reply should come last: %v", got)
	}
	sort.Strings(got)
	first := strings.TrimPrefix(got[0], "101=")
	other := map[string]string{"m1": "m2", "m2": "m1"}[first]
	if want := fmt.Sprintf("[101=%s 102=%s 103=%s 104=%s]", first, other, first, other); fmt.Sprint(got) != want {
		t.Fatalf("requests did not alternate: %v, want %v", got, want)
	}

	for round := 0; round < 2; round++ {
		c := dial("127.243.2.11:24411")
		reqs = reqs[:0]
		for i := uint32(0); i < 6; i++ {
			reqs = iiop.AppendRequest(reqs, 1, true, i, true, []byte(fmt.Sprintf("key-%d", i%3)), "get", nil)
		}
		iiopRound(t, c, reqs, 6)
	}
	for i := 0; i < 3; i++ {
		k := fmt.Sprintf("key-%d", i)
		if a, b := members[0].Keys()[k], members[1].Keys()[k]; a*b != 0 || a+b != 4 {
			t.Fatalf("persist-object-key: %s went %d times to m1 and %d to m2", k, a, b)
		}
	}

	c = dial("127.243.2.12:24412")
	if _, err := c.Write(iiop.AppendRequest(nil, 0, false, 1, true, []byte("k"), "noreply", nil)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := iioptest.ReadMessage(c); err == nil || strings.Contains(err.Error(), "timeout") {
		t.Fatalf("abort-on-timeout: read %v, want the connection reset", err)
	}
	for cmd, want := range map[string][]string{
		"show ltm profile iiop iiop":       {`(?m)^Ltm::IIOP Profile: iiop$`, `(?m)^Requests +4$`, `(?m)^Replies +4$`, `(?m)^Timeouts +0$`, `(?m)^Slow Client Resets +0$`},
		"show ltm profile iiop iiop_keys":  {`(?m)^Requests +12$`, `(?m)^Replies +12$`},
		"show ltm profile iiop iiop_quick": {`(?m)^Requests +1$`, `(?m)^Replies +0$`, `(?m)^Timeouts +1$`, `(?m)^Client Resets +1$`},
	} {
		out, err := run(t, s, cmd)
		for _, re := range want {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("%s lacks %s:\n%s%s", cmd, re, out, err)
			}
		}
	}
}

// TestIIOPProfileRefused: iiop without tcp, beside http or sip, or
// beside an mblb profile whose framing is not rule, is refused and the
// virtual not made; a rule reading the bytes is kept with a warning; on
// every port it is served; the settings reach the engine.
func TestIIOPProfileRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.243.2.20:24420 }",
		"create ltm profile mblb mblb_len framing length",
		"create ltm profile iiop iiop_all defaults-from iiop abort-on-timeout disabled persist-object-key enabled persist-request-id enabled timeout 7",
		"create ltm virtual v_ok destination 127.243.2.21:24421 pool p profiles replace-all-with { tcp { } mblb { } iiop_all { } }",
	} {
		if out, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	for _, c := range []struct{ cmd, want string }{
		{"create ltm virtual v_http destination 127.243.2.22:24422 pool p profiles replace-all-with { tcp { } http { } iiop { } }", "cannot be used with http profile"},
		{"create ltm virtual v_sip destination 127.243.2.23:24423 pool p profiles replace-all-with { tcp { } sip { } iiop { } }", "cannot be used with sip profile"},
		{"create ltm virtual v_fast destination 127.243.2.24:24424 pool p profiles replace-all-with { fastL4 { } iiop { } }", "requires a tcp profile"},
		{"create ltm virtual v_udp destination 127.243.2.25:24425 ip-protocol udp pool p profiles replace-all-with { udp { } iiop { } }", "requires a tcp profile"},
		{"create ltm virtual v_len destination 127.243.2.26:24426 pool p profiles replace-all-with { tcp { } mblb_len { } iiop { } }", "framing length cannot be used beside iiop profile"},
		{"modify ltm profile iiop iiop_all timeout 4294967296", "timeout"},
		{"modify ltm profile iiop iiop_all abort-on-timeout maybe", "maybe"},
	} {
		_, err := run(t, s, c.cmd)
		if !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want one saying %q", c.cmd, err, c.want)
		}
		if f := strings.Fields(c.cmd); f[0] == "create" {
			if out, err := run(t, s, "list ltm virtual "+f[3]); err == "" {
				t.Errorf("the refused virtual exists:\n%s", out)
			}
		}
	}
	out, err := run(t, s, "create ltm rule r_data { when CLIENT_DATA { TCP::release } }")
	if err != "" {
		t.Fatal(out, err)
	}
	out, err = run(t, s, "create ltm virtual v_rule destination 127.243.2.27:24427 pool p profiles replace-all-with { tcp { } iiop { } } rules { r_data }")
	if err != "" || !strings.Contains(out, "CLIENT_DATA and SERVER_DATA events do not run on an IIOP virtual") {
		t.Errorf("a rule reading the bytes of an IIOP virtual: no warning:\n%s%s", out, err)
	}
	out, err = run(t, s, "create ltm virtual v_any destination 127.243.2.28:any pool p profiles replace-all-with { tcp { } iiop { } }")
	if err != "" || strings.Contains(out, "every port") && dataplane.AnyPortSupport() == nil {
		t.Errorf("an iiop virtual on every port: %q %q, want it served", out, err)
	}
	dc, skipped := Translate(e.schema, e.Config())
	v := dc.Virtuals["/Common/v_ok"]
	if v == nil || v.MBLB == nil || v.MBLB.Request.Mode != mblb.IIOP {
		t.Fatalf("not an IIOP virtual: %+v (skipped %v)", v, skipped)
	}
	want := mblb.IIOPOptions{PersistObjectKey: true, PersistRequestID: true, Timeout: 7 * time.Second}
	if o := v.MBLB.Request.IIOP; o != want {
		t.Fatalf("options %+v, want %+v", o, want)
	}
}

// TestIIOPOverTLS: IIOP inside the client's TLS (a client-ssl profile
// beside iiop): requests still alternate and replies come back by id.
func TestIIOPOverTLS(t *testing.T) {
	for i, a := range []string{"127.243.2.31:24431", "127.243.2.32:24432"} {
		s, err := iioptest.Listen(a, fmt.Sprintf("m%d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
	}
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p_tls members add { 127.243.2.31:24431 127.243.2.32:24432 }",
		"create ltm virtual v_tls destination 127.243.2.30:24430 pool p_tls profiles replace-all-with { tcp { } clientssl { context clientside } iiop { } }",
	} {
		if out, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", "127.243.2.30:24430", &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var reqs []byte
	for id := uint32(1); id <= 4; id++ {
		reqs = iiop.AppendRequest(reqs, 2, false, id, true, []byte("k"), "get", nil)
	}
	got := iiopRound(t, c, reqs, 4)
	sort.Strings(got)
	if g := fmt.Sprint(got); g != "[1=m1 2=m2 3=m1 4=m2]" && g != "[1=m2 2=m1 3=m2 4=m1]" {
		t.Fatalf("over TLS: %v", got)
	}
}

// TestIIOPOneConnect: one-connect beside iiop is taken without a
// warning: two clients using the same request ids share the member's
// connection (max-size 1) and each gets its own replies under its own
// ids; an mblb min-conn beside them is taken without a warning and
// opens a connection ahead (within max-size 1); without one-connect it
// is kept with a warning and not passed on.
func TestIIOPOneConnect(t *testing.T) {
	m, err := iioptest.Listen("127.246.3.1:24651", "m1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p_oc members add { 127.246.3.1:24651 }",
		"create ltm profile one-connect oc_one defaults-from oneconnect max-size 1",
		"create ltm profile mblb mblb_warm min-conn 2",
	} {
		if out, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	out, errs := run(t, s, "create ltm virtual v_oc destination 127.246.3.10:24660 pool p_oc profiles replace-all-with { tcp { } iiop { } oc_one { } }")
	if errs != "" || strings.Contains(out, "one-connect") || strings.Contains(out, "do not share") {
		t.Fatalf("one-connect beside iiop: %q %q", out, errs)
	}
	dc, skipped := Translate(e.schema, e.Config())
	v := dc.Virtuals["/Common/v_oc"]
	if v == nil || v.MBLB == nil || v.MBLB.Request.Mode != mblb.IIOP || v.MBLB.OneConnect == nil || v.MBLB.OneConnect.MaxSize != 1 {
		t.Fatalf("not an IIOP virtual sharing connections: %+v (skipped %v)", v, skipped)
	}
	dial := func() net.Conn {
		c, err := net.DialTimeout("tcp", "127.246.3.10:24660", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, b := dial(), dial()
	ra := iiop.AppendRequest(nil, 1, false, 5, true, []byte("k"), "delay:200", nil)
	ra = iiop.AppendRequest(ra, 1, false, 6, true, []byte("k"), "say:a", nil)
	rb := iiop.AppendRequest(nil, 1, true, 5, true, []byte("k"), "say:b", nil)
	rb = iiop.AppendRequest(rb, 1, true, 6, true, []byte("k"), "delay:100", nil)
	if _, err := a.Write(ra); err != nil {
		t.Fatal(err)
	}
	gb := iiopRound(t, b, rb, 2)
	ga := iiopRound(t, a, nil, 2)
	sort.Strings(ga)
	sort.Strings(gb)
	if fmt.Sprint(ga, gb) != "[5=m1 6=m1/a] [5=m1/b 6=m1]" {
		t.Fatalf("a got %v, b got %v", ga, gb)
	}
	out, errs = run(t, s, "show ltm profile one-connect oc_one")
	if !regexp.MustCompile(`(?m)^Total Reuses +3$`).MatchString(out) {
		t.Errorf("the connection was not shared:\n%s%s", out, errs)
	}
	out, errs = run(t, s, "create ltm virtual v_warm destination 127.246.3.11:24661 pool p_oc profiles replace-all-with { tcp { } mblb_warm { } iiop { } oc_one { } }")
	if errs != "" || strings.Contains(out, "min-conn") {
		t.Errorf("min-conn beside iiop and one-connect: %q %q", out, errs)
	}
	out, errs = run(t, s, "create ltm virtual v_own destination 127.246.200.50:24670 pool p_oc profiles replace-all-with { tcp { } mblb_warm { } iiop { } }")
	if errs != "" || !strings.Contains(out, "min-conn 2 is kept, and not acted on beside iiop profile /Common/iiop without a one-connect profile") {
		t.Errorf("min-conn beside iiop without one-connect: %q %q", out, errs)
	}
	// The virtual runs without it: the warning says the setting is not
	// acted on, not that the virtual carries no traffic.
	if !strings.Contains(out, "; kept, not acted on") || strings.Contains(out, "carries no traffic") {
		t.Errorf("the warning on a virtual served without min-conn: %q", out)
	}
	dc, _ = Translate(e.schema, e.Config())
	if v := dc.Virtuals["/Common/v_own"]; v == nil || v.MBLB == nil || v.MBLB.MinConn != 0 || v.MBLB.OneConnect != nil {
		t.Fatalf("v_own: %+v", v)
	}
	if v := dc.Virtuals["/Common/v_warm"]; v == nil || v.MBLB == nil || v.MBLB.MinConn != 2 {
		t.Fatalf("v_warm: %+v", v)
	}
	// v_oc's one shared connection, and v_warm's opened ahead (no
	// client has come to v_warm or v_own).
	opened := regexp.MustCompile(`(?m)^\s*Server Opened +2$`)
	for i := 0; i < 100; i++ {
		if out, _ = run(t, s, "show ltm profile iiop iiop"); opened.MatchString(out) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("min-conn beside iiop and one-connect opened nothing ahead:\n%s", out)
}
