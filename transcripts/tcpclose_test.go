package transcripts

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// holdMembers are the members holdmember started, by address: the state
// of their latest connection.
var holdMembers sync.Map // string → *atomic.Pointer[string]

// holdmember ADDR SECONDS: a member that answers "HOLD Response" to each
// line and, when the client's FIN reaches it, keeps its own side open
// for SECONDS before it closes; memberends tells what its latest
// connection saw. It stops with the script.
func cmdHoldMember(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: holdmember ADDR SECONDS")
	}
	secs, err := strconv.ParseFloat(args[1], 64)
	ts.Check(err)
	hold := time.Duration(secs * float64(time.Second))
	l, err := net.Listen("tcp", args[0])
	ts.Check(err)
	latest := &atomic.Pointer[string]{}
	holdMembers.Store(args[0], latest)
	ts.Defer(func() { l.Close(); holdMembers.Delete(args[0]) })
	set := func(st *atomic.Pointer[string], v string) { st.Store(&v) }
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			st := &atomic.Pointer[string]{}
			set(st, "open")
			holdMembers.Store(args[0], st)
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(20 * time.Second))
				r := bufio.NewReader(c)
				for i := 0; i < 1000; i++ {
					if _, err := r.ReadString('\n'); err != nil {
						if err != io.EOF {
							set(st, endWord(err))
							return
						}
						break
					}
					c.Write([]byte("HOLD Response\n"))
				}
				// The client's FIN: our side stays open for the hold, or
				// until the proxy resets it.
				set(st, "FIN")
				rc, err := c.(*net.TCPConn).SyscallConn()
				if err != nil {
					return
				}
				for end := time.Now().Add(hold); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
					if socketClosed(rc) {
						set(st, "FIN, then RST")
						return
					}
				}
				set(st, "FIN, then closed")
			}()
		}
	}()
}

// memberends ADDR WANT: what the latest connection of holdmember ADDR
// saw, waited for until it is WANT (at most 10 s): "member: open", "FIN"
// (the client's, passed on), "FIN, then RST" (reset later by the proxy),
// "FIN, then closed" (the member closed after its hold) or "RST".
func cmdMemberEnds(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: memberends ADDR WANT")
	}
	got := "no connection"
	for i := 0; i < 500; i++ {
		if v, ok := holdMembers.Load(args[0]); ok {
			if p := v.(*atomic.Pointer[string]).Load(); p != nil {
				got = *p
			}
		}
		if got == args[1] {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Fprintf(ts.Stdout(), "member: %s\n", got)
}

// halfclose ADDR MESSAGE SECONDS: connect, send one line and read its
// answer, then send a FIN and read on until the connection ends (at most
// SECONDS): prints the answer, then "end: FIN", "end: RST" or "end:
// open" (nothing ended it), as the client sees it.
func cmdHalfClose(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 || neg {
		ts.Fatalf("usage: halfclose ADDR MESSAGE SECONDS")
	}
	secs, err := strconv.ParseFloat(args[2], 64)
	ts.Check(err)
	if secs > 30 {
		ts.Fatalf("halfclose: at most 30 seconds")
	}
	c, err := net.DialTimeout("tcp", args[0], 3*time.Second)
	ts.Check(err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	_, err = fmt.Fprintf(c, "%s\n", args[1])
	ts.Check(err)
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		ts.Fatalf("no answer from %s: %v", args[0], err)
	}
	fmt.Fprint(ts.Stdout(), line)
	ts.Check(c.(*net.TCPConn).CloseWrite())
	c.SetDeadline(time.Now().Add(time.Duration(secs * float64(time.Second))))
	_, err = io.Copy(io.Discard, r)
	if err == nil {
		err = io.EOF
	}
	fmt.Fprintf(ts.Stdout(), "end: %s\n", endWord(err))
}

// endWord names how a read ended: FIN, RST or open (the deadline).
func endWord(err error) string {
	switch w := errWord(err); w {
	case "closed":
		return "FIN"
	case "reset":
		return "RST"
	case "timeout":
		return "open"
	default:
		if strings.Contains(w, "deadline") {
			return "open"
		}
		return w
	}
}
