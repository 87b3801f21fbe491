// Package fixtest is a FIX acceptor and initiator for the fix profile's
// tests: an acceptor member that checks every message it gets (BodyLength
// and CheckSum, as a FIX engine does) and answers Logon, NewOrderSingle
// and TestRequest, and a client that sends and reads whole messages.
package fixtest

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/fix"
)

// Build makes a FIX message of BeginString begin and the fields given as
// "tag=value" (MsgType first), with BodyLength and CheckSum computed.
func Build(begin string, fields ...string) []byte {
	m := fix.Message{Fields: []fix.Field{{Tag: fix.TagBeginString, Value: []byte(begin)}, {Tag: fix.TagBodyLength}}}
	for _, f := range fields {
		tag, val, _ := strings.Cut(f, "=")
		var n int
		fmt.Sscanf(tag, "%d", &n)
		m.Fields = append(m.Fields, fix.Field{Tag: n, Value: []byte(val)})
	}
	return m.Encode(nil)
}

// Text is a message with | for SOH, for logs and comparisons.
func Text(raw []byte) string { return strings.ReplaceAll(string(raw), "\x01", "|") }

// Acceptor is a FIX member.
type Acceptor struct {
	Name string
	ln   net.Listener
	mu   sync.Mutex
	got  []string
	bad  []string
}

// StartAcceptor listens on addr; name is the SenderCompID it answers
// with.
func StartAcceptor(addr, name string) (*Acceptor, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return Serve(ln, name), nil
}

// Serve accepts on ln (a TLS listener for a member behind server-ssl);
// name is the SenderCompID it answers with.
func Serve(ln net.Listener, name string) *Acceptor {
	a := &Acceptor{Name: name, ln: ln}
	go a.serve()
	return a
}

// Addr is where it listens.
func (a *Acceptor) Addr() string { return a.ln.Addr().String() }

// Close stops it.
func (a *Acceptor) Close() { a.ln.Close() }

// Messages are the messages it accepted, in | form.
func (a *Acceptor) Messages() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.got...)
}

// Refused are the messages whose BodyLength or CheckSum was wrong (the
// connection was closed after each), with the reason.
func (a *Acceptor) Refused() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.bad...)
}

func (a *Acceptor) serve() {
	for {
		c, err := a.ln.Accept()
		if err != nil {
			return
		}
		go a.conn(c)
	}
}

func (a *Acceptor) conn(c net.Conn) {
	defer c.Close()
	r := fix.Reader{R: c}
	var m fix.Message
	for orders := 1; ; {
		c.SetReadDeadline(time.Now().Add(time.Minute))
		raw, err := r.Next()
		if err != nil {
			return
		}
		if err := m.Parse(raw, false); err != nil {
			a.mu.Lock()
			a.bad = append(a.bad, Text(raw)+" "+err.Error())
			a.mu.Unlock()
			return
		}
		a.mu.Lock()
		a.got = append(a.got, Text(raw))
		a.mu.Unlock()
		get := func(tag int) string { v, _ := m.Get(tag); return string(v) }
		begin, peer := get(fix.TagBeginString), get(fix.TagSenderCompID)
		hdr := []string{"49=" + a.Name, "56=" + peer}
		var reply []byte
		switch m.MsgType() {
		case "A":
			reply = Build(begin, append([]string{"35=A"}, append(hdr, "98=0", "108="+get(108))...)...)
		case "D":
			f := append([]string{"35=8"}, hdr...)
			f = append(f, fmt.Sprintf("37=%s-%d", a.Name, orders), "11="+get(11), "150=0", "39=0", "55="+get(55))
			if v := get(20001); v != "" {
				f = append(f, "20001="+v)
			}
			orders++
			reply = Build(begin, f...)
		case "1":
			reply = Build(begin, append([]string{"35=0"}, append(hdr, "112="+get(112))...)...)
		case "5":
			reply = Build(begin, append([]string{"35=5"}, hdr...)...)
		}
		if reply != nil {
			if _, err := c.Write(reply); err != nil {
				return
			}
		}
	}
}

// Client is a FIX initiator connection.
type Client struct {
	Conn net.Conn
	r    fix.Reader
	m    fix.Message
}

// Dial connects to addr.
func Dial(addr string) (*Client, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return NewClient(c), nil
}

// NewClient is a client on a connection already open (a TLS one).
func NewClient(c net.Conn) *Client { return &Client{Conn: c, r: fix.Reader{R: c}} }

// Send writes raw messages.
func (c *Client) Send(raw ...[]byte) error {
	for _, b := range raw {
		if _, err := c.Conn.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// Recv reads the next message within d, checked as the acceptor checks
// them, in | form.
func (c *Client) Recv(d time.Duration) (string, error) {
	c.Conn.SetReadDeadline(time.Now().Add(d))
	raw, err := c.r.Next()
	if err != nil {
		return "", err
	}
	if err := c.m.Parse(raw, false); err != nil {
		return "", fmt.Errorf("%s: %v", Text(raw), err)
	}
	return Text(raw), nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.Conn.Close() }
