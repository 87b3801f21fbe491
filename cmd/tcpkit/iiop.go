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
// "noreply" never), each LocateRequest with OBJECT_HERE; a line per
// request unless -quiet.
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
// -keys and -ops) and prints each reply's request id and body: sorted by
// request id, or as they came with -arrival.
func iiopClientMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("iiop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connect := fs.String("connect", "", "ADDR:PORT of the virtual (or member)")
	n := fs.Int("n", 1, "requests to send, pipelined in one write")
	keys := fs.String("keys", "obj", "object keys, comma-separated, taken in turn")
	ops := fs.String("ops", "get", "operations, comma-separated, taken in turn (a tcpkit member answers delay:N after N ms, never noreply)")
	first := fs.Uint("id", 1, "the first request id")
	version := fs.String("version", "1.2", "GIOP version: 1.0, 1.1 or 1.2")
	little := fs.Bool("little", false, "little-endian messages")
	locate := fs.Bool("locate", false, "LocateRequests instead of Requests")
	arrival := fs.Bool("arrival", false, "print the replies in the order they came")
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
	keyList, opList := strings.Split(*keys, ","), strings.Split(*ops, ",")
	var out []byte
	for i := 0; i < *n; i++ {
		id := uint32(*first) + uint32(i)
		key := []byte(keyList[i%len(keyList)])
		if *locate {
			out = iiop.AppendLocateRequest(out, minor, *little, id, key)
			continue
		}
		out = iiop.AppendRequest(out, minor, *little, id, true, key, opList[i%len(opList)], nil)
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
