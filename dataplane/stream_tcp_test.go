package dataplane

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/streamfilter"
)

// startLineEcho answers each line with "echo: <line>" and ends its side
// when the client ends its own.
func startLineEcho(t *testing.T, addr string) {
	t.Helper()
	serveConns(t, addr, func(c net.Conn) {
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				io.WriteString(c, "echo: "+line)
			}
			if err != nil {
				c.(*net.TCPConn).CloseWrite()
				return
			}
		}
	})
}

// TestTCPStreamProfile: a stream profile on a plain TCP virtual rewrites
// both directions (cat becomes dog on the way in, dog bird on the way
// out, so the client sees both), a match split over two writes included;
// bytes held at the client's end go out before the half-close; rules
// switch the filter (STREAM::disable) and give it another expression, and
// STREAM_MATCHED picks a replacement.
func TestTCPStreamProfile(t *testing.T) {
	t.Parallel()
	startLineEcho(t, "127.20.94.2:9000")
	p, _ := newPlane(t)
	e, err := streamfilter.Parse("@cat@dog@ @dog@bird@")
	if err != nil {
		t.Fatal(err)
	}
	cfg := basic("127.20.94.1:8000", "127.20.94.2:9000")
	cfg.Virtuals["/Common/vs"].Stream = &mblb.StreamOptions{Profile: "/Common/s", Expr: e}
	ruled := basic("127.20.94.3:8000", "127.20.94.2:9000")
	for name, v := range ruled.Virtuals {
		v.Stream = &mblb.StreamOptions{Profile: "/Common/s", Expr: e}
		v.Rules, _ = compileRules(t, `
when CLIENT_ACCEPTED {
    if { [TCP::client_port] % 2 == 0 } {
        STREAM::disable
    } else {
        STREAM::expression {@cat@@}
    }
}
when STREAM_MATCHED {
    STREAM::replace "<[STREAM::match]>"
}`)
		cfg.Virtuals[name+"_ruled"] = v
		v.Name = name + "_ruled"
	}
	mustApply(t, p, cfg)

	c := dialVS(t, "127.20.94.1:8000")
	if got := c.mustAsk("a cat and a dog"); got != "echo: a bird and a bird" {
		t.Errorf("through the profile: %q", got)
	}
	// A match cut between two writes is held until it is whole.
	c.c.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(c.c, "one ca")
	time.Sleep(50 * time.Millisecond)
	io.WriteString(c.c, "t\n")
	if line, err := c.r.ReadString('\n'); err != nil || line != "echo: one bird\n" {
		t.Errorf("split match: %q %v", line, err)
	}
	// What the filter holds at the client's end (the last bytes might
	// start "cat") goes out before the half-close.
	io.WriteString(c.c, "last c")
	c.c.CloseWrite()
	rest, err := io.ReadAll(c.r)
	if err != nil || string(rest) != "echo: last c" {
		t.Errorf("held bytes at the end: %q %v", rest, err)
	}

	// With rules: an odd client port gets the rule's expression (cat
	// deleted, STREAM_MATCHED putting it back in brackets), an even one
	// no filter at all.
	for i := 0; i < 2; i++ {
		c := dialVS(t, "127.20.94.3:8000")
		port := c.c.LocalAddr().(*net.TCPAddr).Port
		want := "echo: <cat> and dog"
		if port%2 == 0 {
			want = "echo: cat and dog"
		}
		if got := c.mustAsk("cat and dog"); got != want {
			t.Errorf("client port %d: %q, want %q", port, got, want)
		}
	}
}
