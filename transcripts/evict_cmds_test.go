package transcripts

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// heldConn is one client connection a script keeps open across commands.
type heldConn struct {
	c *net.TCPConn
	r *bufio.Reader
	// err is why the connection failed to open (a virtual that resets
	// a refused client may do it before the dial returns).
	err error
}

// heldConns are the scripts' held connections, by script and name.
var heldConns sync.Map // map[*testscript.TestScript]map[string]*heldConn

func held(ts *testscript.TestScript) map[string]*heldConn {
	m, loaded := heldConns.LoadOrStore(ts, map[string]*heldConn{})
	if !loaded {
		ts.Defer(func() {
			for _, h := range m.(map[string]*heldConn) {
				if h.c != nil {
					h.c.Close()
				}
			}
			heldConns.Delete(ts)
		})
	}
	return m.(map[string]*heldConn)
}

// holdconn NAME SOURCE ADDR: a client from SOURCE (an address) that
// connects to ADDR and stays open, idle, until the script ends or
// asks it something (holdask), to see which connections a virtual
// keeps (eviction). A connection refused while opening is held as
// failed: holdask then says how.
func cmdHoldConn(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 || neg {
		ts.Fatalf("usage: holdconn NAME SOURCE ADDR")
	}
	d := net.Dialer{Timeout: 3 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(args[1]), 0))}
	c, err := d.Dial("tcp", args[2])
	if err != nil {
		held(ts)[args[0]] = &heldConn{err: err}
		return
	}
	held(ts)[args[0]] = &heldConn{c: c.(*net.TCPConn), r: bufio.NewReader(c)}
}

// holdask NAME MESSAGE...: the held client NAME sends MESSAGE as a line
// and prints the answer line, or how its connection ended (reset,
// closed, timeout) when none comes within 3 seconds.
func cmdHoldAsk(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || neg {
		ts.Fatalf("usage: holdask NAME MESSAGE...")
	}
	h := held(ts)[args[0]]
	if h == nil {
		ts.Fatalf("holdask: no held connection %s", args[0])
	}
	if h.err != nil {
		fmt.Fprintf(ts.Stdout(), "%s: %s\n", args[0], errWord(h.err))
		return
	}
	h.c.SetDeadline(time.Now().Add(3 * time.Second))
	_, err := fmt.Fprintf(h.c, "%s\n", strings.Join(args[1:], " "))
	var line string
	if err == nil {
		line, err = h.r.ReadString('\n')
	}
	if err != nil {
		fmt.Fprintf(ts.Stdout(), "%s: %s\n", args[0], errWord(err))
		return
	}
	fmt.Fprintf(ts.Stdout(), "%s: %s", args[0], line)
}
