package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
	"github.com/openltm/openltm/dataplane/iiop/iioptest"
)

// The CORBA IIOP tools: a GIOP member answering each request with its
// label (iiop-serve), and a client pipelining GIOP requests on one
// connection and printing each reply's request id and body (iiop).

// iiopServeMain answers GIOP until ctx ends: each Request with a Reply
// whose body is the label (operation "delay:N" answers after N ms,
// "noreply" never, "say:TEXT" with LABEL/TEXT, "closeonce:LABEL" with a
// CloseConnection the first time: dataplane/iiop/iioptest), each
// LocateRequest with OBJECT_HERE; a line per request (and
// CancelRequest) unless -quiet.
func iiopServeMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("iiop-serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "ADDR:PORT to listen on")
	label := fs.String("label", "S1", "the member's name, the body of every reply")
	quiet := fs.Bool("quiet", false, "no line per request")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" {
		return errors.New("iiop-serve needs -listen ADDR:PORT")
	}
	var mu sync.Mutex
	seen := func(line string) {
		mu.Lock()
		fmt.Fprintln(stdout, line)
		mu.Unlock()
	}
	if *quiet {
		seen = nil
	}
	s, err := iioptest.ListenSeen(*listen, *label, seen)
	if err != nil {
		return err
	}
	mu.Lock()
	fmt.Fprintf(stdout, "%s: GIOP on %s\n", *label, s.Addr())
	mu.Unlock()
	<-ctx.Done()
	s.Close()
	return nil
}

// iiopClientMain sends -n GIOP requests in one write on one connection
// (request ids from -id, object keys and operations taken in turn from
// -keys and -ops; with -fragment N each Request split into a first
// fragment of N body bytes and a Fragment with the rest) and prints each
// reply's request id and body: sorted by request id, or as they came
// with -arrival.
func iiopClientMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("iiop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connect := fs.String("connect", "", "ADDR:PORT of the virtual (or member)")
	n := fs.Int("n", 1, "requests to send, pipelined in one write")
	keys := fs.String("keys", "obj", "object keys, comma-separated, taken in turn")
	ops := fs.String("ops", "get", "operations, comma-separated, taken in turn (a tcpkit member answers delay:N after N ms, never noreply, and closes its connection unanswered on close)")
	first := fs.Uint("id", 1, "the first request id")
	version := fs.String("version", "1.2", "GIOP version: 1.0, 1.1 or 1.2")
	little := fs.Bool("little", false, "little-endian messages")
	locate := fs.Bool("locate", false, "LocateRequests instead of Requests")
	arrival := fs.Bool("arrival", false, "print the replies in the order they came")
	fragment := fs.Int("fragment", 0, "split each Request into a first fragment of this many body bytes and a Fragment with the rest (GIOP 1.1 and 1.2; 0: whole)")
	wait := fs.Duration("timeout", 10*time.Second, "how long to wait for the replies")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *connect == "" || *n < 1 {
		return errors.New("iiop needs -connect ADDR:PORT and -n of at least 1")
	}
	var minor uint8
	switch *version {
	case "1.0":
		minor = 0
	case "1.1":
		minor = 1
	case "1.2":
		minor = 2
	default:
		return fmt.Errorf("-version %q: GIOP 1.0, 1.1 or 1.2", *version)
	}
	if *fragment < 0 || *fragment > 0 && (minor == 0 || *locate) {
		return fmt.Errorf("-fragment %d: a positive number of body bytes, for Requests of GIOP 1.1 or 1.2", *fragment)
	}
	keyList, opList := strings.Split(*keys, ","), strings.Split(*ops, ",")
	var out []byte
	for i := 0; i < *n; i++ {
		id := uint32(*first) + uint32(i)
		key := []byte(keyList[i%len(keyList)])
		if *locate {
			out = iiop.AppendLocateRequest(out, minor, *little, id, key)
			continue
		}
		req := iiop.AppendRequest(nil, minor, *little, id, true, key, opList[i%len(opList)], nil)
		if *fragment > 0 {
			// The request id must lie in the first fragment (after the
			// empty service contexts in 1.1), and the rest be something.
			least := 4
			if minor == 1 {
				least = 8
			}
			if body := len(req) - iiop.HeaderSize; *fragment < least || *fragment >= body {
				return fmt.Errorf("-fragment %d: request %d has %d body bytes; the first fragment needs %d to %d", *fragment, id, body, least, body-1)
			}
			first, rest := iiop.Split(req, *fragment)
			out = append(out, first...)
			out = iiop.AppendFragment(out, minor, *little, id, false, rest)
			continue
		}
		out = append(out, req...)
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, "tcp", *connect)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(*wait))
	if _, err := c.Write(out); err != nil {
		return err
	}
	type reply struct {
		id   uint32
		line string
	}
	var got []reply
	var rerr error
	for len(got) < *n {
		b, err := iioptest.ReadMessage(c)
		if err != nil {
			rerr = err
			break
		}
		m, err := iiop.Parse(b)
		if err != nil {
			rerr = err
			break
		}
		switch m.Type {
		case iiop.Reply:
			if repo, code, done, ok := iiop.SystemException(b); ok {
				got = append(got, reply{m.RequestID, fmt.Sprintf("reply id %d: system exception %s minor %d %s", m.RequestID, repo, code, completionName(done))})
				break
			}
			got = append(got, reply{m.RequestID, fmt.Sprintf("reply id %d: %s", m.RequestID, iiop.ReplyBody(b))})
		case iiop.LocateReply:
			got = append(got, reply{m.RequestID, fmt.Sprintf("locate reply id %d", m.RequestID)})
		default:
			got = append(got, reply{m.RequestID, fmt.Sprintf("GIOP %v", m.Type)})
		}
	}
	if !*arrival {
		sort.SliceStable(got, func(i, j int) bool { return got[i].id < got[j].id })
	}
	for _, r := range got {
		fmt.Fprintln(stdout, r.line)
	}
	if rerr != nil {
		if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) || strings.Contains(rerr.Error(), "reset") {
			rerr = errors.New("connection closed")
		}
		return fmt.Errorf("after %d of %d replies: %v", len(got), *n, rerr)
	}
	return nil
}

// completionName is a system exception's completion_status as CORBA
// spells it.
func completionName(c uint32) string {
	switch c {
	case iiop.CompletedYes:
		return "COMPLETED_YES"
	case iiop.CompletedNo:
		return "COMPLETED_NO"
	case iiop.CompletedMaybe:
		return "COMPLETED_MAYBE"
	}
	return fmt.Sprintf("completed %d", c)
}
