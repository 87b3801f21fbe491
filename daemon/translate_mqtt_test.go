package daemon

import (
	"strings"
	"testing"
)

// TestMQTTProfileTranslated: a TCP virtual's mqtt profile (the
// built-in or one of its children) reaches the plane; a virtual without
// one, or one where the parser cannot run (a stream profile), has
// none, the latter with a warning.
func TestMQTTProfileTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.104.3.11:1883 }",
		"create ltm profile mqtt m_child defaults-from mqtt description brokers",
		"create ltm rule byid { when MQTT_CLIENT_INGRESS { if {[MQTT::type] eq \"CONNECT\"} { log local0. [MQTT::client_id] } } }",
		"create ltm virtual v_builtin destination 127.104.3.1:1883 pool p profiles replace-all-with { tcp { } mqtt { } } rules { byid }",
		"create ltm virtual v_child destination 127.104.3.2:1883 pool p profiles replace-all-with { tcp { } m_child { } }",
		"create ltm virtual v_plain destination 127.104.3.3:1883 pool p profiles replace-all-with { tcp { } }",
		"create ltm virtual v_stream destination 127.104.3.4:1883 pool p profiles replace-all-with { tcp { } mqtt { } stream { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	for name, want := range map[string]string{
		"/Common/v_builtin": "/Common/mqtt",
		"/Common/v_child":   "/Common/m_child",
		"/Common/v_plain":   "",
		"/Common/v_stream":  "",
	} {
		v := dc.Virtuals[name]
		if v == nil {
			t.Fatalf("%s left out: %q", name, skipped)
		}
		got := v.MQTT
		if (got == nil) != (want == "") || got != nil && got.Profile != want {
			t.Errorf("%s: mqtt %+v, want %q", name, got, want)
		}
	}
	if !strings.Contains(strings.Join(skipped, "\n"), "MQTT parser does not run with a stream profile") {
		t.Errorf("no warning for the stream virtual: %q", skipped)
	}
}

// TestMQTTProfileRefused: BIG-IP refuses an mqtt profile without a tcp
// profile and beside http, and MQTT_ events on a virtual without an
// mqtt profile; nothing is made.
func TestMQTTProfileRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.104.3.11:1883 }",
		"create ltm rule mr { when MQTT_CLIENT_INGRESS { MQTT::drop } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, c := range []struct{ cmd, err string }{
		{"create ltm virtual v_http destination 127.104.3.5:80 pool p profiles replace-all-with { tcp { } http { } mqtt { } }", "cannot be used with http profile"},
		{"create ltm virtual v_udp destination 127.104.3.6:1883 ip-protocol udp pool p profiles replace-all-with { udp { } mqtt { } }", "requires a tcp profile"},
		{"create ltm virtual v_rule destination 127.104.3.7:1883 pool p profiles replace-all-with { tcp { } } rules { mr }", "MQTT_CLIENT_INGRESS in rule (/Common/mr) requires an associated MQTT profile"},
		{"create ltm profile mqtt m_bad defaults-from mqtt max-message-size 10", "max-message-size"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.err) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.err)
		}
	}
	for _, l := range []string{"list ltm virtual v_http", "list ltm virtual v_udp", "list ltm virtual v_rule", "list ltm profile mqtt m_bad"} {
		if _, err := run(t, s, l); err == "" {
			t.Errorf("%s: made", l)
		}
	}
}
