//go:build linux

package dataplane

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/mblb"
)

// socketEnd watches c's TCP state without reading it, for at most bound:
// "RST" once a reset closed it, "FIN" once the peer's FIN came, "open"
// otherwise.
func socketEnd(c syscall.Conn, bound time.Duration) string {
	rc, err := c.SyscallConn()
	if err != nil {
		return err.Error()
	}
	for end := time.Now().Add(bound); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		var st uint8
		rc.Control(func(fd uintptr) {
			if ti, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
				st = ti.State
			}
		})
		switch st {
		case 7: // TCP_CLOSE: the peer's reset
			return "RST"
		case 8: // TCP_CLOSE_WAIT
			return "FIN"
		}
	}
	return "open"
}

// smallRecv is a listener or dialer control giving the socket a small
// receive buffer, so that its window closes after a few kilobytes.
func smallRecv(_, _ string, rc syscall.RawConn) error {
	return rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 4096) })
}

// TestMBLBCloseTimers: an HTTP virtual's close-wait-timeout resets a
// client that half-closed while its answer is still owed (its member
// connection closes with it), and its
// zero-window-timeout resets a client, or a member connection, that
// takes nothing; without the timers both wait. On the event loops and on
// goroutines (a rule that suspends its event keeps the virtual there).
func TestMBLBCloseTimers(t *testing.T) {
	const req = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	// holdAnswer reads the request and never answers; bigAnswer answers
	// 8 MB to a client that reads none of it.
	holdAnswer := func(c *net.TCPConn) string {
		http.ReadRequest(bufio.NewReader(c))
		return "held|" + socketEnd(c, 10*time.Second)
	}
	bigAnswer := func(c *net.TCPConn) string {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return err.Error()
		}
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 8388608\r\n\r\n"))
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		c.Write(make([]byte, 8<<20))
		return "sent"
	}
	// noRead never reads the client's upload and reports how its
	// connection ended within bound: the timer's cases wait long enough
	// for the reset, the cases without it a few of the timer's periods,
	// as the client's "open" does.
	noRead := func(bound time.Duration) func(c *net.TCPConn) string {
		return func(c *net.TCPConn) string { return socketEnd(c, bound) }
	}
	cases := []struct {
		name  string
		close *TCPClose
		serve func(c *net.TCPConn) string
		// client is what the client does; small: its receive buffer is
		// small and it reads nothing.
		client func(c *net.TCPConn)
		small  bool
		// want is how the client's socket ends; member, when set, how the
		// member's does.
		want, member string
	}{
		{name: "close-wait", close: &TCPClose{AfterFIN: time.Second}, serve: holdAnswer,
			client: func(c *net.TCPConn) { c.Write([]byte(req)); c.CloseWrite() }, want: "RST", member: "held|FIN"},
		{name: "no close-wait", serve: holdAnswer,
			client: func(c *net.TCPConn) { c.Write([]byte(req)); c.CloseWrite() }, want: "open"},
		{name: "zero-window client", close: &TCPClose{ZeroWindow: time.Second}, serve: bigAnswer, small: true,
			client: func(c *net.TCPConn) { c.Write([]byte(req)) }, want: "RST"},
		{name: "no zero-window client", serve: bigAnswer, small: true,
			client: func(c *net.TCPConn) { c.Write([]byte(req)) }, want: "open"},
		{name: "zero-window member", close: &TCPClose{ZeroWindow: time.Second}, serve: noRead(10 * time.Second),
			client: upload, member: "RST"},
		{name: "no zero-window member", serve: noRead(3 * time.Second), client: upload, want: "open", member: "open"},
	}
	paths := map[string]func(v *Virtual){
		"loop":      func(v *Virtual) {},
		"goroutine": func(v *Virtual) { v.Rules, _ = compileRules(t, "when HTTP_REQUEST { after 1 }") },
	}
	i := 0
	for _, pname := range []string{"loop", "goroutine"} {
		for _, tc := range cases {
			i++
			vsAddr := "127.14.16." + strconv.Itoa(i) + ":8000"
			member := "127.14.17." + strconv.Itoa(i) + ":9000"
			path := paths[pname]
			t.Run(pname+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				lc := net.ListenConfig{}
				if strings.Contains(tc.name, "member") {
					lc.Control = smallRecv // the member's window closes soon
				}
				seen := make(chan string, 4)
				l, err := lc.Listen(t.Context(), "tcp", member)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { l.Close() })
				go func() {
					for {
						c, err := l.Accept()
						if err != nil {
							return
						}
						go func() {
							defer c.Close()
							seen <- tc.serve(c.(*net.TCPConn))
						}()
					}
				}()
				p, _ := newPlane(t)
				cfg := mblbConfig(vsAddr, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, member)
				v := cfg.Virtuals["/Common/vs"]
				v.TCPClose = tc.close
				path(v)
				mustApply(t, p, cfg)
				d := net.Dialer{Timeout: 2 * time.Second}
				if tc.small {
					d.Control = smallRecv
				}
				nc, err := d.Dial("tcp", vsAddr)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { nc.Close() })
				c := nc.(*net.TCPConn)
				tc.client(c)
				if tc.want != "" {
					bound := 8 * time.Second
					if tc.want == "open" {
						bound = 3 * time.Second // what must not end: a few of the timers' periods
					}
					if got := socketEnd(c, bound); got != tc.want {
						t.Errorf("client: %s, want %s", got, tc.want)
					}
				}
				if tc.member == "" {
					return
				}
				select {
				case got := <-seen:
					if got != tc.member {
						t.Errorf("member: %s, want %s", got, tc.member)
					}
				case <-time.After(12 * time.Second):
					t.Errorf("the member's connection did not end")
				}
			})
		}
	}
}

// upload sends a request with an 8 MB body, as far as the virtual takes
// it.
func upload(c *net.TCPConn) {
	go func() {
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		c.Write([]byte("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 8388608\r\n\r\n"))
		c.Write(make([]byte, 8<<20))
	}()
}
