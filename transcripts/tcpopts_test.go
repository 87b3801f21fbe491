package transcripts

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// idleclose ADDR MESSAGE SECONDS: connect, send one line and read the
// answer, then stay silent until the virtual ends the connection (at most
// SECONDS): prints the answer, then "idle: closed" for a FIN or
// "idle: reset" for a reset, as the client sees it (the tcp profile's
// reset-on-timeout).
func cmdIdleClose(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: idleclose ADDR MESSAGE SECONDS")
	}
	secs, err := strconv.ParseFloat(args[2], 64)
	ts.Check(err)
	if secs > 30 {
		ts.Fatalf("idleclose: at most 30 seconds")
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
	c.SetDeadline(time.Now().Add(time.Duration(secs * float64(time.Second))))
	_, err = r.ReadByte()
	fmt.Fprintf(ts.Stdout(), "idle: %s\n", errWord(err))
}
