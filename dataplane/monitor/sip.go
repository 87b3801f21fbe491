package monitor

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// SIPCheck is the sip monitor's settings: a SIP request (OPTIONS by
// default) sent over udp, tcp or tls (sips), and the status codes that
// mean up (Filter; none: any final answer) or down (FilterNeg).
type SIPCheck struct {
	Mode      string // "udp" (BIG-IP's default), "tcp", "tls" or "sips"
	Request   string // the request line; "" means OPTIONS to the member
	Headers   string // extra header lines, `\r\n` between them
	Filter    []int
	FilterNeg []int
}

func (c *SIPCheck) equal(o *SIPCheck) bool {
	if c == nil || o == nil {
		return c == o
	}
	return c.Mode == o.Mode && c.Request == o.Request && c.Headers == o.Headers &&
		slices.Equal(c.Filter, o.Filter) && slices.Equal(c.FilterNeg, o.FilterNeg)
}

func (c *SIPCheck) check() error {
	if c == nil {
		return nil
	}
	switch c.Mode {
	case "", "udp", "tcp", "tls", "sips":
	default:
		return fmt.Errorf("mode %q is not udp, tcp, tls or sips", c.Mode)
	}
	if strings.ContainsAny(c.Request, "\r\n") {
		return errors.New("request must be one line")
	}
	if c.Request != "" && len(strings.Fields(c.Request)) != 3 {
		return fmt.Errorf("request %q is not METHOD URI SIP/2.0", c.Request)
	}
	return nil
}

// sipRequest is the request the probe sends from local to target, with
// the transport named in its Via.
func sipRequest(c *SIPCheck, transport string, local net.Addr, target netip.AddrPort) []byte {
	line := "OPTIONS sip:" + target.String() + " SIP/2.0"
	if c.Request != "" {
		line = c.Request
	}
	method := strings.Fields(line)[0]
	id := make([]byte, 8)
	rand.Read(id)
	tag := hex.EncodeToString(id)
	var b strings.Builder
	b.WriteString(line + "\r\n")
	fmt.Fprintf(&b, "Via: SIP/2.0/%s %s;branch=z9hG4bK%s;rport\r\n", transport, local, tag)
	b.WriteString("Max-Forwards: 70\r\n")
	fmt.Fprintf(&b, "From: <sip:monitor@%s>;tag=%s\r\n", local, tag)
	fmt.Fprintf(&b, "To: <sip:%s>\r\n", target)
	fmt.Fprintf(&b, "Call-ID: %s@%s\r\n", tag, local)
	fmt.Fprintf(&b, "CSeq: 1 %s\r\n", method)
	fmt.Fprintf(&b, "Contact: <sip:monitor@%s>\r\n", local)
	if h := strings.TrimSpace(strings.ReplaceAll(c.Headers, `\r\n`, "\r\n")); h != "" {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("Content-Length: 0\r\n\r\n")
	return []byte(b.String())
}

// sipStatus reads the status code of a SIP response's status line.
func sipStatus(line string) (int, error) {
	f := strings.Fields(line)
	if len(f) >= 2 && f[0] == "SIP/2.0" {
		if code, err := strconv.Atoi(f[1]); err == nil && code >= 100 && code <= 699 {
			return code, nil
		}
	}
	if len(line) > 200 {
		line = line[:200] + "..."
	}
	return 0, fmt.Errorf("Unexpected response: %q", line)
}

// sipJudge turns a final status code into the probe's verdict.
func sipJudge(c *SIPCheck, code int) (Outcome, error) {
	if slices.Contains(c.FilterNeg, code) {
		return Outcome{}, fmt.Errorf("Response status %d is one the monitor's filter-neg lists", code)
	}
	if len(c.Filter) > 0 && !slices.Contains(c.Filter, code) {
		return Outcome{}, fmt.Errorf("Response status %d is not one the monitor's filter lists", code)
	}
	return Outcome{Up: true}, nil
}

// probeSIP sends one SIP request and judges the first final answer (a
// provisional 1xx is read past). Over udp the request is sent once; a
// member that does not answer before the deadline is down, as one
// answering ICMP port unreachable is.
func probeSIP(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	c := spec.SIP
	if c == nil {
		c = &SIPCheck{}
	}
	if err := c.check(); err != nil {
		return Outcome{}, err
	}
	var raw net.Conn
	transport := "UDP"
	if c.Mode == "" || c.Mode == "udp" {
		uc, err := dialer(ctx).DialContext(ctx, "udp", target.String())
		if err != nil {
			return Outcome{}, fmt.Errorf("Unable to connect; %v", unwrapSyscall(err))
		}
		raw = uc
	} else {
		tc, err := dial(ctx, target)
		if err != nil {
			return Outcome{}, err
		}
		raw, transport = tc, "TCP"
	}
	defer raw.Close()
	defer bound(ctx, raw)()
	conn := raw
	if c.Mode == "tls" || c.Mode == "sips" {
		cfg, err := spec.TLS.config("")
		if err != nil {
			return Outcome{}, err
		}
		sc := tls.Client(raw, cfg)
		if err := sc.HandshakeContext(ctx); err != nil {
			if ctx.Err() != nil {
				return Outcome{}, ErrNoResponse
			}
			return Outcome{}, fmt.Errorf("SSL handshake failed; %v", unwrapSyscall(err))
		}
		conn, transport = sc, "TLS"
	}
	msg := sipRequest(c, transport, conn.LocalAddr(), target)
	if _, err := conn.Write(msg); err != nil {
		if ctx.Err() != nil {
			return Outcome{}, ErrNoResponse
		}
		return Outcome{}, fmt.Errorf("Unable to send; %v", unwrapSyscall(err))
	}
	read := sipLineReader(conn, transport == "UDP")
	for i := 0; i < 16; i++ { // provisional answers, then the final one
		line, err := read()
		if err != nil {
			var ne net.Error
			if ctx.Err() != nil || errors.As(err, &ne) && ne.Timeout() {
				return Outcome{}, ErrNoResponse
			}
			return Outcome{}, fmt.Errorf("Unable to receive; %v", unwrapSyscall(err))
		}
		code, err := sipStatus(line)
		if err != nil {
			return Outcome{}, err
		}
		if code >= 200 {
			return sipJudge(c, code)
		}
	}
	return Outcome{}, errors.New("No final response after 16 provisional ones")
}

// sipLineReader returns the status line of each response on conn: one
// per datagram over udp, one per message over a stream (the rest of a
// message, headers and a body of its Content-Length, is skipped).
func sipLineReader(conn net.Conn, datagrams bool) func() (string, error) {
	if datagrams {
		buf := make([]byte, maxReply)
		return func() (string, error) {
			n, err := conn.Read(buf)
			if err != nil {
				return "", err
			}
			line, _, _ := strings.Cut(string(buf[:n]), "\r\n")
			return line, nil
		}
	}
	br := bufio.NewReaderSize(&capped{r: conn, left: maxReply}, 4096)
	return func() (string, error) {
		status := ""
		length := 0
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return "", err
			}
			l = strings.TrimRight(l, "\r\n")
			if status == "" {
				if l == "" {
					continue // keep-alive CRLFs between messages
				}
				status = l
				continue
			}
			if l == "" {
				break
			}
			if k, v, ok := strings.Cut(l, ":"); ok {
				k = strings.ToLower(strings.TrimSpace(k))
				if k == "content-length" || k == "l" {
					length, _ = strconv.Atoi(strings.TrimSpace(v))
				}
			}
		}
		if length > 0 {
			if _, err := br.Discard(min(length, maxReply)); err != nil {
				return "", err
			}
		}
		return status, nil
	}
}
