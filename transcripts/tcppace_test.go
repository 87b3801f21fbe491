package transcripts

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// sockinfo ADDR MESSAGE: connect asking for Multipath TCP, send one line
// and print the answer, then "mptcp: true|false" (whether the connection
// is MPTCP, which takes the virtual's listener having it) and, where ss
// is installed, "pacing bound: NNNbps" of the virtual's socket towards
// this client as the kernel reports it (rate-pace-max-rate), "pacing
// bound: none" without one.
func cmdSockInfo(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: sockinfo ADDR MESSAGE")
	}
	d := net.Dialer{Timeout: 3 * time.Second}
	d.SetMultipathTCP(true)
	c, err := d.Dial("tcp", args[0])
	ts.Check(err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	_, err = fmt.Fprintf(c, "%s\n", args[1])
	ts.Check(err)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		ts.Fatalf("no answer from %s: %v", args[0], err)
	}
	fmt.Fprint(ts.Stdout(), line)
	mp, _ := c.(*net.TCPConn).MultipathTCP()
	fmt.Fprintf(ts.Stdout(), "mptcp: %v\n", mp)
	if _, err := exec.LookPath("ss"); err != nil {
		return
	}
	out, err := exec.Command("ss", "-tin", "src", args[0], "dst", c.LocalAddr().String()).Output()
	ts.Check(err)
	if m := regexp.MustCompile(`pacing_rate \S+/(\d+bps)`).FindSubmatch(out); m != nil {
		fmt.Fprintf(ts.Stdout(), "pacing bound: %s\n", m[1])
	} else {
		fmt.Fprintln(ts.Stdout(), "pacing bound: none")
	}
}

// mptcpWorks reports whether the kernel makes Multipath TCP connections
// on loopback: net.mptcp.enabled, and a listener and a client with MPTCP
// that agree (on an address of the transcripts' range).
func mptcpWorks() bool {
	b, err := os.ReadFile("/proc/sys/net/mptcp/enabled")
	if err != nil || strings.TrimSpace(string(b)) != "1" {
		return false
	}
	var lc net.ListenConfig
	lc.SetMultipathTCP(true)
	l, err := lc.Listen(context.Background(), "tcp", "127.14.23.250:0")
	if err != nil {
		return false
	}
	defer l.Close()
	var d net.Dialer
	d.SetMultipathTCP(true)
	c, err := d.Dial("tcp", l.Addr().String())
	if err != nil {
		return false
	}
	defer c.Close()
	mp, err := c.(*net.TCPConn).MultipathTCP()
	return mp && err == nil
}

// httphalfclose ADDR SECONDS: send an HTTP request and the FIN at once,
// then read until the connection ends (at most SECONDS): prints "end:
// FIN", "end: RST" or "end: open", as the client sees it (what came
// before is not printed).
func cmdHTTPHalfClose(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: httphalfclose ADDR SECONDS")
	}
	secs, err := strconv.ParseFloat(args[1], 64)
	ts.Check(err)
	if secs > 30 {
		ts.Fatalf("httphalfclose: at most 30 seconds")
	}
	c, err := net.DialTimeout("tcp", args[0], 3*time.Second)
	ts.Check(err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Duration(secs * float64(time.Second))))
	_, err = fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", args[0])
	ts.Check(err)
	ts.Check(c.(*net.TCPConn).CloseWrite())
	_, err = io.Copy(io.Discard, c)
	if err == nil {
		err = io.EOF
	}
	fmt.Fprintf(ts.Stdout(), "end: %s\n", endWord(err))
}
