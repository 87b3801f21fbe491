package transcripts

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/fix/fixtest"
	"github.com/rogpeppe/go-internal/testscript"
)

// fixAcceptors are the scripts' FIX members by name, for fixseen.
var fixAcceptors sync.Map

// fixacceptor ADDR NAME: run a FIX acceptor (dataplane/fix/fixtest) as
// a member until the script ends. It checks every message's BodyLength
// and CheckSum and answers Logon and NewOrderSingle with NAME as its
// SenderCompID, so a script sees which member a session reached.
func cmdFIXAcceptor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: fixacceptor ADDR NAME")
	}
	a, err := fixtest.StartAcceptor(args[0], args[1])
	if err != nil {
		ts.Fatalf("fixacceptor: %v", err)
	}
	key := ts.Getenv("WORK") + "/" + args[1]
	fixAcceptors.Store(key, a)
	ts.Defer(func() { a.Close(); fixAcceptors.Delete(key) })
}

// fixseen NAME: print the messages acceptor NAME accepted ("got ...")
// and those it refused for a bad BodyLength or CheckSum ("refused ...").
func cmdFIXSeen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fixseen NAME")
	}
	v, ok := fixAcceptors.Load(ts.Getenv("WORK") + "/" + args[0])
	if !ok {
		ts.Fatalf("fixseen: no acceptor %s", args[0])
	}
	a := v.(*fixtest.Acceptor)
	var b strings.Builder
	for _, m := range a.Messages() {
		fmt.Fprintf(&b, "got %s\n", m)
	}
	for _, m := range a.Refused() {
		fmt.Fprintf(&b, "refused %s\n", m)
	}
	ts.Stdout().Write([]byte(b.String()))
}

// fixsession ADDR SENDER ?BEGIN? ?-badsum?: a FIX session to ADDR as
// SENDER (BeginString BEGIN, FIX.4.4 by default): Logon, NewOrderSingle
// (with tag 10001=desk7) and Heartbeat, printing each answer. -badsum
// sends the order with a wrong CheckSum first. It fails when the connection
// ends before the Logon's and the order's answers are in.
func cmdFIXSession(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || len(args) > 4 {
		ts.Fatalf("usage: fixsession ADDR SENDER ?BEGIN? ?-badsum?")
	}
	begin, badsum := "FIX.4.4", false
	for _, a := range args[2:] {
		if a == "-badsum" {
			badsum = true
		} else {
			begin = a
		}
	}
	sender := args[1]
	err := func() error {
		c, err := fixtest.Dial(args[0])
		if err != nil {
			return err
		}
		defer c.Close()
		order := fixtest.Build(begin, "35=D", "34=2", "49="+sender, "56=EXEC", "11=ORD1", "21=1", "38=100", "40=2", "44=101.25", "54=1", "55=IBM", "10001=desk7")
		msgs := [][]byte{order, fixtest.Build(begin, "35=0", "34=3", "49="+sender, "56=EXEC")}
		if badsum {
			bad := append([]byte(nil), order...)
			bad[len(bad)-2] = '0' + (bad[len(bad)-2]-'0'+1)%10
			msgs = append([][]byte{bad}, msgs...)
		}
		c.Send(fixtest.Build(begin, "35=A", "34=1", "49="+sender, "56=EXEC", "98=0", "108=30"))
		m, err := c.Recv(15 * time.Second)
		if err != nil {
			return err
		}
		fmt.Fprintf(ts.Stdout(), "%s\n", m)
		c.Send(msgs...)
		if m, err = c.Recv(15 * time.Second); err != nil {
			return err
		}
		fmt.Fprintf(ts.Stdout(), "%s\n", m)
		return nil
	}()
	if err != nil {
		fmt.Fprintf(ts.Stderr(), "fixsession: %v\n", err)
	}
	if (err != nil) != neg {
		if neg {
			ts.Fatalf("fixsession: the session went through")
		}
		ts.Fatalf("fixsession: %v", err)
	}
}
