package daemon

import (
	"strings"
	"testing"
)

// TestHashPayloadTranslated: a hash profile with payload settings gives
// the virtual server its payload key (inherited through defaults-from);
// one left at the defaults stays rule-only; UDP and HTTP virtuals take it
// too; where openltm cannot read the
// first bytes (client-ssl without http, fallback) the virtual server is kept, saying why;
// a pattern that is no regular expression is refused.
func TestHashPayloadTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.7.3.11:80 }",
		"create ltm persistence hash h_pay hash-start-pattern sid= hash-end-pattern \"[;]\" hash-buffer-limit 512 timeout 60",
		"create ltm persistence hash h_child defaults-from h_pay hash-offset 2",
		"create ltm persistence hash h_len hash-offset 4 hash-length 8",
		"create ltm virtual v_pay destination 127.7.3.1:80 pool p persist replace-all-with { h_child { default yes } }",
		"create ltm virtual v_len destination 127.7.3.2:80 pool p persist replace-all-with { h_len { default yes } }",
		"create ltm virtual v_plain destination 127.7.3.3:80 pool p persist replace-all-with { hash { default yes } }",
		"create ltm virtual v_http destination 127.7.3.4:80 pool p profiles replace-all-with { tcp http } persist replace-all-with { h_len { default yes } }",
		"create ltm virtual v_fb destination 127.7.3.5:80 pool p persist replace-all-with { source_addr { default yes } } fallback-persistence h_len",
		"create ltm virtual v_tls destination 127.7.3.7:443 pool p profiles replace-all-with { tcp clientssl } persist replace-all-with { h_len { default yes } }",
		"create ltm virtual v_udp destination 127.7.3.6:1812 ip-protocol udp profiles replace-all-with { udp } pool p persist replace-all-with { h_len { default yes } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	v := dc.Virtuals["/Common/v_pay"]
	if v == nil || v.Persist == nil || v.Persist.Payload == nil {
		t.Fatalf("v_pay: %+v", v)
	}
	if pl := v.Persist.Payload; pl.Start == nil || pl.Start.String() != "sid=" || pl.End == nil || pl.Offset != 2 || pl.Limit != 512 || v.Persist.Timeout.Seconds() != 60 {
		t.Errorf("v_pay payload %+v, timeout %v", pl, v.Persist.Timeout)
	}
	if v := dc.Virtuals["/Common/v_len"]; v == nil || v.Persist == nil || v.Persist.Payload == nil || v.Persist.Payload.Offset != 4 || v.Persist.Payload.Length != 8 {
		t.Errorf("v_len: %+v", v)
	}
	if v := dc.Virtuals["/Common/v_http"]; v == nil || v.Persist == nil || v.Persist.Payload == nil {
		t.Errorf("v_http (HTTP virtuals find the key in each request): %+v", v)
	}
	if v := dc.Virtuals["/Common/v_udp"]; v == nil || v.Persist == nil || v.Persist.Payload == nil || v.Persist.Payload.Length != 8 {
		t.Errorf("v_udp (UDP virtuals find the key in each balanced datagram): %+v", v)
	}
	if v := dc.Virtuals["/Common/v_plain"]; v == nil || v.Persist == nil || v.Persist.Payload != nil {
		t.Errorf("v_plain (the built-in hash profile: a rule's key only): %+v", v)
	}
	for _, want := range []string{
		"ltm virtual /Common/v_tls: persistence profile /Common/h_len: openltm finds a hash profile's payload key in a standard TCP virtual server's first bytes only when it passes the connection through",
		"ltm virtual /Common/v_fb: persistence profile /Common/h_len: a hash profile's payload key runs as a virtual server's default persistence only",
	} {
		if !strings.Contains(strings.Join(skipped, "\n"), want) {
			t.Errorf("skipped %q\nwant one with %q", skipped, want)
		}
	}
	for _, c := range []struct{ cmd, want string }{
		{"modify ltm persistence hash h_pay hash-start-pattern (sid", "hash-start-pattern \"(sid\" is not a valid regular expression"},
		{"modify ltm persistence hash h_len hash-buffer-limit 11", "reach past hash-buffer-limit 11"},
		{"modify ltm persistence hash h_len hash-buffer-limit 2000000", "hash-buffer-limit 2000000 is out of range"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.want) {
			t.Errorf("%s: %q, want %q", c.cmd, err, c.want)
		}
	}
}
