package daemon

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// httpBackend serves 200 "ok" on addr until the test ends.
func httpBackend(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// ruleEventBlock reads one Ltm::Rule Event block of a show: its
// counters by label ("Total", "Failures", ...; the CPU rows as "Average",
// "Maximum", "Minimum").
func ruleEventBlock(t *testing.T, out, title string) map[string]string {
	t.Helper()
	i := strings.Index(out, title+"\n")
	if i < 0 {
		t.Fatalf("no %q in:\n%s", title, out)
	}
	rest := out[i:]
	if j := strings.Index(rest, "\n\n"); j >= 0 {
		rest = rest[:j]
	}
	m := map[string]string{}
	for _, l := range strings.Split(rest, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 {
			m[strings.Join(f[:len(f)-1], " ")] = f[len(f)-1]
		}
	}
	return m
}

// TestShowLtmRule drives requests through an HTTP virtual with two rules,
// one failing on some requests and one rejecting others, and reads their
// counters with show ltm rule; reset-stats zeroes them and a commit that
// leaves a rule's text alone keeps them.
func TestShowLtmRule(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	httpBackend(t, "127.44.1.11:8080")
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.44.1.11:8080 }",
		"create ltm rule errs {\nwhen HTTP_REQUEST {\n  if { [HTTP::uri] starts_with \"/boom\" } { error \"boom requested\" }\n}\n}",
		"create ltm rule deny {\nwhen HTTP_REQUEST priority 600 {\n  if { [HTTP::uri] starts_with \"/deny\" } { reject }\n}\nwhen CLIENT_ACCEPTED { set a 1 }\n}",
		"create ltm virtual vs destination 127.44.1.1:80 pool p rules { errs deny } profiles replace-all-with { tcp http }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(path string) error {
		resp, err := client.Get("http://127.44.1.1" + path)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	paths := map[string]int{"/": 5, "/boom": 2, "/deny": 3}
	for p, n := range paths {
		for range n {
			err := get(p)
			if (p == "/") != (err == nil) {
				t.Fatalf("GET %s: %v", p, err)
			}
		}
	}
	// The rejected and failed requests end the connection; the counters
	// are written before, but wait for the dataplane to finish up.
	want := func(rule, ev string, total, failures, aborts int) {
		t.Helper()
		var m map[string]string
		for range 100 {
			out, err := run(t, s, "show ltm rule "+rule+" raw")
			if err != "" {
				t.Fatal(err)
			}
			m = ruleEventBlock(t, out, "Ltm::Rule Event: "+rule+":"+ev)
			if m["Total"] == fmt.Sprint(total) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if m["Total"] != fmt.Sprint(total) || m["Failures"] != fmt.Sprint(failures) || m["Aborts"] != fmt.Sprint(aborts) {
			t.Fatalf("%s:%s %v, want total %d failures %d aborts %d", rule, ev, m, total, failures, aborts)
		}
		if total > 0 && (m["Minimum"] == "0" || m["Maximum"] == "0" || m["Average"] == "0") {
			t.Fatalf("%s:%s cycles %v", rule, ev, m)
		}
	}
	want("errs", "HTTP_REQUEST", 10, 2, 0)
	want("deny", "HTTP_REQUEST", 8, 0, 3) // the failed requests never reach it
	want("deny", "CLIENT_ACCEPTED", 10, 0, 0)
	if m := ruleEventBlock(t, showRun(t, s, "show ltm rule deny"), "Ltm::Rule Event: deny:HTTP_REQUEST"); m["Priority"] != "600" {
		t.Fatalf("priority: %v", m)
	}

	// All rules (the built-in _sys_https_redirect and _sys_auth_* too, as
	// on BIG-IP), and the detail lines with the times.
	out := showRun(t, s, "show ltm rule detail")
	if strings.Count(out, "Ltm::Rule Event: ")-strings.Count(out, "Ltm::Rule Event: _sys_auth_") != 4 || !strings.Contains(out, "Ltm::Rule Event: _sys_auth_ldap:AUTH_RESULT") || !strings.Contains(out, "Ltm::Rule Event: _sys_https_redirect:HTTP_REQUEST") || !regexp.MustCompile(`Time on Executing \(us\)\n  Average +\d+\.\d{3}\n`).MatchString(out) {
		t.Fatalf("show ltm rule detail:\n%s", out)
	}

	// A commit that does not change the rules keeps their counters.
	showRun(t, s, "modify ltm pool p description kept")
	want("errs", "HTTP_REQUEST", 10, 2, 0)

	// A changed rule starts from zero; the other keeps its counters.
	showRun(t, s, "modify ltm rule errs {\nwhen HTTP_REQUEST {\n  if { [HTTP::uri] starts_with \"/bang\" } { error \"bang\" }\n}\n}")
	want("errs", "HTTP_REQUEST", 0, 0, 0)
	want("deny", "HTTP_REQUEST", 8, 0, 3)

	// reset-stats of one rule, then of all.
	showRun(t, s, "reset-stats ltm rule deny")
	want("deny", "HTTP_REQUEST", 0, 0, 0)
	want("deny", "CLIENT_ACCEPTED", 0, 0, 0)
	if err := get("/"); err != nil {
		t.Fatal(err)
	}
	want("errs", "HTTP_REQUEST", 1, 0, 0)
	want("deny", "HTTP_REQUEST", 1, 0, 0)
	showRun(t, s, "reset-stats ltm rule")
	want("errs", "HTTP_REQUEST", 0, 0, 0)

	if _, err := run(t, s, "show ltm rule nosuch"); !strings.Contains(err, "nosuch") {
		t.Fatalf("unknown rule: %q", err)
	}
}

func showRun(t *testing.T, s *Session, line string) string {
	t.Helper()
	out, err := run(t, s, line)
	if err != "" {
		t.Fatalf("%s: %s", line, err)
	}
	return out
}

// TestShowGtmRule counts a gtm rule's DNS_REQUEST on a wide IP: show gtm
// rule reads the same counters as show ltm rule.
func TestShowGtmRule(t *testing.T) {
	e, g := openWithGSLB(t)
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create gtm datacenter dc1",
		"create gtm server lc1 datacenter dc1 virtual-servers add { vs1 { destination 127.44.2.11:80 } }",
		"create gtm pool a p1 members add { lc1:vs1 }",
		"create gtm rule steer { when DNS_REQUEST { if { [IP::client_addr] starts_with \"127.44.3.\" } { host 127.44.9.9 } } }",
		"create gtm wideip a www.example.com pools add { p1 } rules { steer }",
	} {
		showRun(t, s, c)
	}
	for _, ldns := range []string{"127.44.3.5", "127.44.4.5", "127.44.3.6"} {
		ask(t, g, "www.example.com", ldns)
	}
	m := ruleEventBlock(t, showRun(t, s, "show gtm rule steer raw"), "Gtm::Rule Event: steer:DNS_REQUEST")
	if m["Total"] != "3" || m["Failures"] != "0" || m["Aborts"] != "0" || m["Minimum"] == "0" {
		t.Fatalf("show gtm rule: %v", m)
	}
	showRun(t, s, "reset-stats gtm rule steer")
	if m := ruleEventBlock(t, showRun(t, s, "show gtm rule"), "Gtm::Rule Event: steer:DNS_REQUEST"); m["Total"] != "0" {
		t.Fatalf("after reset-stats: %v", m)
	}
}

// TestShowLtmRuleL4UDP counts rules on a standard (L4) virtual that
// rejects every connection and on a UDP virtual, per datagram.
func TestShowLtmRuleL4UDP(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	udpSink, err := net.ListenPacket("udp", "127.44.5.11:5300")
	if err != nil {
		t.Fatal(err)
	}
	defer udpSink.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm rule refuse {\nwhen CLIENT_ACCEPTED { reject }\n}",
		"create ltm rule udp_count {\nwhen CLIENT_ACCEPTED { set n 0 }\nwhen CLIENT_DATA { incr n [string length [UDP::payload]] }\n}",
		"create ltm pool up members add { 127.44.5.11:5300 }",
		"create ltm virtual l4 destination 127.44.5.1:9000 rules { refuse }",
		"create ltm virtual u destination 127.44.5.2:53 ip-protocol udp pool up rules { udp_count } profiles replace-all-with { udp }",
	} {
		showRun(t, s, c)
	}
	for range 2 {
		if a := askVS(t, "127.44.5.1:9000", "hi"); a != "reset" && a != "closed" {
			t.Fatalf("rejected connection answered %q", a)
		}
	}
	c, err := net.Dial("udp", "127.44.5.2:53")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 3 {
		if _, err := c.Write([]byte("datagram")); err != nil {
			t.Fatal(err)
		}
	}
	poll := func(rule, ev, total, aborts string) {
		t.Helper()
		var m map[string]string
		for range 200 {
			m = ruleEventBlock(t, showRun(t, s, "show ltm rule "+rule+" raw"), "Ltm::Rule Event: "+rule+":"+ev)
			if m["Total"] == total {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if m["Total"] != total || m["Aborts"] != aborts || m["Failures"] != "0" {
			t.Fatalf("%s:%s %v, want total %s aborts %s", rule, ev, m, total, aborts)
		}
	}
	poll("refuse", "CLIENT_ACCEPTED", "2", "2")
	poll("udp_count", "CLIENT_ACCEPTED", "1", "0")
	poll("udp_count", "CLIENT_DATA", "3", "0")
}
