//go:build linux

package daemon

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// TestMaxRejectRate: the clients a virtual refuses are reset up to
// tm.maxrejectrate a second (250 by default), and closed without a reset
// over it, each second over the limit with its 011e0001 line in the ltm
// log; standard (L4) and HTTP (message) virtuals alike.
func TestMaxRejectRate(t *testing.T) {
	dir := t.TempDir()
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	for _, cmd := range []string{
		"create ltm pool p members add { 127.37.1.11:9000 }",
		"create ltm virtual rej destination 127.37.1.1:9000 reject profiles replace-all-with { tcp { } }",
		"create ltm virtual web destination 127.37.1.2:80 ip-protocol tcp pool p profiles replace-all-with { tcp http } disabled",
	} {
		if _, errText := run(t, s, cmd); errText != "" {
			t.Fatalf("%s: %s", cmd, errText)
		}
	}
	setRate := func(v string) {
		t.Helper()
		if _, errText := run(t, s, "modify sys db tm.maxrejectrate value "+v); errText != "" {
			t.Fatal(errText)
		}
	}
	for _, vs := range []string{"127.37.1.1:9000", "127.37.1.2:80"} {
		if got := refusal(t, vs, false); got != "reset" {
			t.Fatalf("%s at the default rate: %s, want reset", vs, got)
		}
	}
	setRate("0") // no resets at all
	for _, vs := range []string{"127.37.1.1:9000", "127.37.1.2:80"} {
		for i := 0; i < 2; i++ {
			if got := refusal(t, vs, false); got != "close" {
				t.Fatalf("%s at rate 0: %s, want close", vs, got)
			}
		}
		// A request the client sent before the virtual closed is read
		// and dropped, so the close stays a FIN; one that lands after
		// the close meets a closed socket, which the kernel resets. The
		// order is the two processes' race: at least one of a few must
		// end with a FIN (without the drain none would).
		closes := 0
		for i := 0; i < 6; i++ {
			if refusal(t, vs, true) == "close" {
				closes++
			}
		}
		if closes == 0 {
			t.Fatalf("%s at rate 0: every client that sent a request was reset", vs)
		}
	}
	re := regexp.MustCompile(`warning tmm\[\d+\]: 011e0001:4: Limiting open port RST response from \d+ to 0 packets/sec\n`)
	var log string
	for i := 0; i < 150 && !re.MatchString(log); i++ { // the line comes when the second ends
		time.Sleep(20 * time.Millisecond)
		b, _ := os.ReadFile(filepath.Join(dir, LogFile))
		log = string(b)
	}
	if !re.MatchString(log) {
		t.Fatalf("no 011e0001 line in the ltm log:\n%s", log)
	}

	setRate("2")
	start := time.Now().Unix()
	resets := 0
	const n = 8
	for i := 0; i < n; i++ {
		if refusal(t, "127.37.1.1:9000", false) == "reset" {
			resets++
		}
	}
	seconds := int(time.Now().Unix()-start) + 1
	if resets < 2 || resets > 2*seconds {
		t.Fatalf("rate 2: %d resets of %d refusals over %d seconds", resets, n, seconds)
	}
	setRate("250")
	if got := refusal(t, "127.37.1.1:9000", false); got != "reset" {
		t.Fatalf("back at 250: %s, want reset", got)
	}
}

// refusal connects from 127.37.0.1 to a virtual that refuses it and says
// how the connection ended: "reset" or "close" (a FIN). With send, the
// client writes a request first, as a browser does: what it sent and
// the virtual did not read must not turn the close into a reset.
func refusal(t *testing.T, vs string, send bool) string {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 37, 0, 1)}}
	c, err := d.Dial("tcp", vs)
	if err != nil {
		if errors.Is(err, syscall.ECONNRESET) {
			return "reset"
		}
		t.Fatal(err)
	}
	defer c.Close()
	if send {
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
			t.Fatal(err)
		}
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = io.Copy(io.Discard, c)
	switch {
	case err == nil:
		return "close"
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	}
	t.Fatalf("%s: %v", vs, err)
	return ""
}
