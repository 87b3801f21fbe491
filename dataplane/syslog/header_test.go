package syslog

import (
	"testing"
	"time"
)

// TestSyslogHeaders compares the headers with the examples of RFC 5424
// (section 6.5, example 1, without its BOM) and RFC 3164 (section 5.4,
// example 1), and covers a message's own PRI, line ends and framing.
func TestSyslogHeaders(t *testing.T) {
	at := time.Date(2003, time.October, 11, 22, 14, 15, 3_000_000, time.UTC)
	const su = "'su root' failed for lonvick on /dev/pts/8"
	cases := []struct {
		name string
		h    Header
		msg  string
		want string
	}{
		{"rfc5424 example 1", Header{Format: RFC5424, Facility: 4, Severity: 2, Hostname: "mymachine.example.com", App: "su", MsgID: "ID47"}, su,
			"<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - " + su},
		{"rfc3164 example 1", Header{Format: RFC3164, Facility: 4, Severity: 2, Hostname: "mymachine", App: "su"}, su,
			"<34>Oct 11 22:14:15 mymachine su: " + su},
		{"rfc5424 nil values", Header{Format: RFC5424, Facility: 16, Severity: 6}, "x",
			"<134>1 2003-10-11T22:14:15.003Z - - - - - x"},
		{"legacy-bigip", Header{Format: LegacyBIGIP, Facility: 16, Severity: 6, Hostname: "bigip1", App: "tmm"}, "hello",
			"<134>Oct 11 22:14:15 bigip1 info tmm: hello"},
		{"own PRI wins", Header{Format: RFC3164, Facility: 16, Severity: 6, Hostname: "lb", App: "tmm"}, "<190> GET /",
			"<190>Oct 11 22:14:15 lb tmm: GET /"},
		{"own PRI, legacy severity word", Header{Format: LegacyBIGIP, Hostname: "lb", App: "tmm"}, "<187>down",
			"<187>Oct 11 22:14:15 lb err tmm: down"},
		{"newline dropped", Header{Format: RFC5424, Facility: 16, Severity: 6, Hostname: "lb", App: "tmm"}, "line\r\n",
			"<134>1 2003-10-11T22:14:15.003Z lb tmm - - - line"},
		{"framed for TCP", Header{Format: RFC3164, Facility: 23, Severity: 7, Hostname: "lb", App: "tmm", Framed: true}, "line\n",
			"<191>Oct 11 22:14:15 lb tmm: line\n"},
		{"single-digit day padded", Header{Format: RFC3164, Facility: 1, Severity: 5, Hostname: "lb"}, "m",
			"<13>Oct 11 22:14:15 lb m"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := string(c.h.Append(nil, at, []byte(c.msg))); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
	if got := string((&Header{Format: RFC3164, Hostname: "h"}).Append(nil, time.Date(2024, 3, 5, 1, 2, 3, 0, time.UTC), []byte("m"))); got != "<0>Mar  5 01:02:03 h m" {
		t.Errorf("a day under 10 is space-padded (RFC 3164 4.1.2): %q", got)
	}
}

// TestSplitPRI reads a message's own PRI only when it is one.
func TestSplitPRI(t *testing.T) {
	cases := []struct {
		in   string
		pri  int
		rest string
	}{
		{"<190> text", 190, "text"},
		{"<0>x", 0, "x"},
		{"<191>", 191, ""},
		{"<192>x", -1, "<192>x"},
		{"<1234>x", -1, "<1234>x"},
		{"<>x", -1, "<>x"},
		{"<5x", -1, "<5x"},
		{"plain", -1, "plain"},
		{"<7", -1, "<7"},
	}
	for _, c := range cases {
		pri, rest := SplitPRI([]byte(c.in))
		if pri != c.pri || string(rest) != c.rest {
			t.Errorf("SplitPRI(%q) = %d %q; want %d %q", c.in, pri, rest, c.pri, c.rest)
		}
	}
}

// TestParsing reads tmsh's words and refuses others.
func TestParsing(t *testing.T) {
	for in, want := range map[string]Format{"rfc5424": RFC5424, "rfc3164": RFC3164, "legacy-bigip": LegacyBIGIP, "": RFC5424} {
		if f, err := ParseFormat(in); err != nil || f != want {
			t.Errorf("ParseFormat(%q) = %v, %v", in, f, err)
		}
	}
	if _, err := ParseFormat("cef"); err == nil {
		t.Error("ParseFormat(cef) took it")
	}
}
