package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"
)

// clientMain connects and exchanges labelled messages.
func clientMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connect := fs.String("connect", "", "address:port to connect to (usually a virtual server)")
	label := fs.String("label", "C1", "label put in every message")
	count := fs.Int("count", 1, "messages to send (ignored with -stdin)")
	interval := fs.Duration("interval", time.Second, "pause between messages (with -frame length, -window, -size or -summary: none unless given)")
	fromStdin := fs.Bool("stdin", false, "send one message per line of standard input")
	reconnect := fs.Bool("reconnect", false, "open a new connection for every message")
	frame := fs.String("frame", "line", "framing: line, raw (answers: one read each) or length (4-byte big-endian length first, both ways)")
	size := fs.Int("size", 0, "pad each message with dots to this many bytes")
	window := fs.Int("window", 1, "requests in flight before waiting for answers: 1 is a synchronous client, more an asynchronous (pipelined) one")
	summary := fs.Bool("summary", false, "print one line at the end (answers, per server) instead of one per message")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for each answer")
	delay := fs.Duration("delay", 0, "connect first, then wait this long before the first message (a client that connects and sends nothing)")
	mss := fs.Int("mss", 0, "the MSS the SYN advertises (TCP_MAXSEG; line and raw clients); 0: the route's")
	ttl := fs.Int("ttl", 0, "the IP TTL of the client's packets (line and raw clients); 0: the system's")
	tos := fs.Int("tos", 0, "the IP ToS of the client's packets (line and raw clients)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *connect == "" {
		return errors.New("client needs -connect")
	}
	if *frame != "line" && *frame != "raw" && *frame != "length" {
		return fmt.Errorf("-frame %q: want line, raw or length", *frame)
	}
	if *frame == "length" || *window > 1 || *size > 0 || *summary {
		if *fromStdin || *reconnect {
			return errors.New("-stdin and -reconnect work with synchronous line or raw clients only")
		}
		// These clients send as fast as answers allow unless -interval
		// is given.
		gap := time.Duration(0)
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "interval" {
				gap = *interval
			}
		})
		return runMsgClient(ctx, *connect, *delay, &msgClient{label: *label, frame: *frame, size: *size, window: *window,
			count: *count, interval: gap, timeout: *timeout, summary: *summary, out: stdout})
	}
	c := &labelClient{addr: *connect, raw: *frame == "raw", timeout: *timeout, out: stdout, control: synControl(*mss, *ttl, *tos)}
	defer c.close()
	next := func(i int) (string, bool) {
		if i >= *count {
			return "", false
		}
		if i > 0 {
			select {
			case <-ctx.Done():
				return "", false
			case <-time.After(*interval):
			}
		}
		return fmt.Sprintf("%s message %d", *label, i+1), true
	}
	if *fromStdin {
		sc := bufio.NewScanner(stdin)
		next = func(int) (string, bool) {
			if ctx.Err() != nil || !sc.Scan() {
				return "", false
			}
			return sc.Text(), true
		}
	}
	if *delay > 0 {
		if err := c.connect(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(*delay):
		}
	}
	for i := 0; ; i++ {
		msg, ok := next(i)
		if !ok {
			return nil
		}
		if *reconnect {
			c.close()
		}
		answer, err := c.exchange(msg)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s -> %s\n", msg, answer)
	}
}

// labelClient keeps one connection open across messages.
type labelClient struct {
	addr    string
	raw     bool
	timeout time.Duration
	out     io.Writer
	c       net.Conn
	r       *bufio.Reader
	// control sets the SYN's MSS, TTL and ToS (-mss, -ttl, -tos); nil
	// leaves the system's.
	control func(string, string, syscall.RawConn) error
}

func (l *labelClient) close() {
	if l.c != nil {
		l.c.Close()
		l.c = nil
	}
}

// connect opens the connection unless it is open.
func (l *labelClient) connect() error {
	if l.c != nil {
		return nil
	}
	d := net.Dialer{Timeout: l.timeout, Control: l.control}
	c, err := d.Dial("tcp", l.addr)
	if err != nil {
		return err
	}
	l.c, l.r = c, bufio.NewReader(c)
	fmt.Fprintf(l.out, "connected %s -> %s\n", c.LocalAddr(), c.RemoteAddr())
	return nil
}

func (l *labelClient) exchange(msg string) (string, error) {
	if err := l.connect(); err != nil {
		return "", err
	}
	l.c.SetDeadline(time.Now().Add(l.timeout))
	if _, err := io.WriteString(l.c, msg+"\n"); err != nil {
		l.close()
		return "", fmt.Errorf("send: %w", err)
	}
	if l.raw {
		buf := make([]byte, 64<<10)
		n, err := l.r.Read(buf)
		if err != nil {
			l.close()
			return "", fmt.Errorf("answer: %w", err)
		}
		return strings.TrimRight(string(buf[:n]), "\r\n"), nil
	}
	line, err := l.r.ReadString('\n')
	if err != nil {
		l.close()
		return "", fmt.Errorf("answer: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// runMsgClient connects, waits delay, and runs m over the connection.
func runMsgClient(ctx context.Context, addr string, delay time.Duration, m *msgClient) error {
	c, err := net.DialTimeout("tcp", addr, m.timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintf(m.out, "connected %s -> %s\n", c.LocalAddr(), c.RemoteAddr())
	if delay > 0 {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return m.run(ctx, c)
}
