package monitor

import (
	"bufio"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseScript(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []scriptStep
		err        string
	}{
		{name: "smtp", text: "# SMTP\n\nexpect \"220\"\nsend \"HELO m.example\\r\\n\"\n  expect\t\"250\"  # hello\r\nsend \"QUIT\\r\\n\"\n",
			want: []scriptStep{{text: "220", line: 3}, {send: true, text: "HELO m.example\r\n", line: 4}, {text: "250", line: 5}, {send: true, text: "QUIT\r\n", line: 6}}},
		{name: "escapes", text: `send "a\"b\\c\t\x00\xFF#"`, want: []scriptStep{{send: true, text: "a\"b\\c\t\x00\xff#", line: 1}}},
		{name: "empty send", text: `send ""`, want: []scriptStep{{send: true, line: 1}}},
		{name: "unknown command", text: "expect \"x\"\n  sned \"y\"", err: `s:2:3: unknown command "sned" (a line is send "STRING" or expect "STRING")`},
		{name: "upper case", text: `SEND "x"`, err: `s:1:1: unknown command "SEND"`},
		{name: "no string", text: "send", err: "s:1:5: send needs a double-quoted string"},
		{name: "bare word", text: "expect 220", err: "s:1:8: expect needs a double-quoted string"},
		{name: "not closed", text: `send "abc`, err: `s:1:6: the string is not closed`},
		{name: "bad escape", text: `send "a\qb"`, err: `s:1:8: unknown escape \q`},
		{name: "bad hex", text: `send "\x4"`, err: `s:1:7: \x needs two hex digits`},
		{name: "trailing text", text: `send "a" "b"`, err: `s:1:10: unexpected "\"b\"" after the string`},
		{name: "empty expect", text: `expect ""`, err: `s:1:8: expect needs a string to wait for`},
		{name: "nothing", text: "# only\n\n", err: "s:1:1: the script has no send or expect line"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseScript("s", c.text)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), "script "+c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("parseScript = %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

// lineServer greets, then answers each line it reads with reply(line)
// (nothing when ""), for up to 16 lines.
func lineServer(greet func(net.Conn), reply func(string) string) func(net.Conn) {
	return func(c net.Conn) {
		greet(c)
		r := bufio.NewReader(c)
		for i := 0; i < 16; i++ {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if a := reply(strings.TrimRight(line, "\r\n")); a != "" {
				c.Write([]byte(a))
			}
		}
	}
}

func TestProbeScripted(t *testing.T) {
	smtp := func(line string) string {
		switch {
		case strings.HasPrefix(line, "HELO "):
			return "250 mail.example\r\n"
		case line == "QUIT":
			return "221 bye\r\n"
		}
		return "500 what?\r\n"
	}
	say := func(s string) func(net.Conn) { return func(c net.Conn) { c.Write([]byte(s)) } }
	script := "expect \"220\"\nsend \"HELO m.example\\r\\n\"\nexpect \"250\"\nsend \"QUIT\\r\\n\"\n"
	for _, c := range []struct {
		name, script string
		serve        func(net.Conn)
		up           bool
		errSub       string
		errIs        error
		deadline     time.Duration
	}{
		{name: "a conversation", script: script, serve: lineServer(say("220 mail.example ESMTP\r\n"), smtp), up: true},
		{name: "a greeting in pieces", script: script, serve: lineServer(func(c net.Conn) {
			c.Write([]byte("2"))
			time.Sleep(20 * time.Millisecond)
			c.Write([]byte("20 hi\r\n"))
		}, smtp), up: true},
		{name: "the wrong greeting", script: script, serve: lineServer(say("554 go away\r\n"), smtp),
			errSub: `script line 1 expects "220"; got "554 go away\r\n"`, errIs: ErrNoResponse, deadline: 300 * time.Millisecond},
		{name: "the wrong greeting, then closed", script: script, serve: say("554 go away\r\n"),
			errSub: `script line 1 expects "220"; got "554 go away\r\n"`, errIs: ErrNoMatch},
		{name: "a refused command", script: script, serve: lineServer(say("220 hi\r\n"), func(string) string { return "500 no\r\n" }),
			errSub: `script line 3 expects "250"`, errIs: ErrNoResponse, deadline: 300 * time.Millisecond},
		{name: "closed before the expected string", script: script, serve: func(net.Conn) {},
			errSub: `Connection closed before "220" (script line 1)`},
		{name: "only sends", script: "send \"PING\\r\\n\"\n", serve: lineServer(say(""), smtp), up: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			target, err := echoServer(t, "127.0.0.1:0", c.serve)
			if err != nil {
				t.Fatal(err)
			}
			d := c.deadline
			if d == 0 {
				d = 5 * time.Second
			}
			spec := &Spec{Type: Scripted, Script: &ScriptCheck{File: "/config/smtp.script", Text: c.script}}
			o, err := probe(t, spec, target, d)
			wantVerdict(t, o, err, c.up, c.errSub, c.errIs)
		})
	}
}
