package monitor

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/http2"
)

//lint:file-ignore SA1019 x/net's client is deprecated for net/http's, whose ClientConn dials its own connections and does its own TLS; the probe must speak HTTP/2 over the connection it dialed (its ip-dscp, the ssl-profile's handshake, ALPN h2 checked by hand), which x/net's NewClientConn takes as it is.

// HTTP2 probes a member over HTTP/2, so a member whose HTTP/1.1 side
// answers while its HTTP/2 side (the one an http2 server-side profile
// uses) is broken is down.
const HTTP2 Type = "http2"

// h2Transport is the codec of every http2 probe: one connection per
// probe, made and closed by the probe, so nothing of it is shared but
// its settings.
var h2Transport = &http2.Transport{DisableCompression: true}

// h2Send is an http2 monitor's send string read as the HTTP/1-style
// request BIG-IP's monitors are written in: a request line, header
// lines, a blank line and a body.
type h2Send struct {
	method, target string
	host           string // the Host header, "" when none
	header         http.Header
	body           string
}

// parseH2Send reads send; "" is GET / [M].
func parseH2Send(send string) (*h2Send, error) {
	if strings.TrimSpace(send) == "" {
		return &h2Send{method: http.MethodGet, target: "/", header: http.Header{}}, nil
	}
	head, body, ok := strings.Cut(send, "\r\n\r\n")
	if !ok {
		head, body, _ = strings.Cut(send, "\n\n")
	}
	lines := strings.Split(strings.TrimRight(head, "\r\n"), "\n")
	f := strings.Fields(lines[0])
	if len(f) == 0 || len(f) > 3 {
		return nil, fmt.Errorf("send: %q is not a request line (METHOD /path [HTTP/version])", strings.TrimSpace(lines[0]))
	}
	s := &h2Send{method: f[0], target: "/", header: http.Header{}, body: body}
	// Methods are written in capitals (GET, HEAD, POST, OPTIONS, the
	// WebDAV ones); a word that is not is more likely a path or a typo
	// than a method [M].
	for _, c := range s.method {
		if (c < 'A' || c > 'Z') && c != '-' && c != '_' {
			return nil, fmt.Errorf("send: %q is not an HTTP method (GET, HEAD, POST, ..., in capitals) at the start of the request line", s.method)
		}
	}
	if len(f) > 1 {
		s.target = f[1]
	}
	if len(f) == 3 && !strings.HasPrefix(f[2], "HTTP/") {
		return nil, fmt.Errorf("send: %q after the path is not an HTTP version (HTTP/1.1, HTTP/2)", f[2])
	}
	if strings.HasPrefix(s.target, "http://") || strings.HasPrefix(s.target, "https://") {
		u, err := url.Parse(s.target)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("send: %q is not a URL", s.target)
		}
		s.host, s.target = u.Host, u.RequestURI()
	}
	if !strings.HasPrefix(s.target, "/") && !(s.target == "*" && s.method == http.MethodOptions) {
		return nil, fmt.Errorf("send: the request target %q must be a path (/...), a URL, or * with OPTIONS", s.target)
	}
	for _, l := range lines[1:] {
		l = strings.TrimRight(l, "\r")
		if l == "" {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("send: %q is not a header line (Name: value)", l)
		}
		switch strings.ToLower(k) {
		case "host":
			s.host = v
		case "content-length", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
			// The length is the body's; the connection's own headers
			// have no meaning in HTTP/2 (RFC 9113 8.2.2) [M].
		default:
			s.header.Add(k, v)
		}
	}
	return s, nil
}

// request is the HTTP/2 request of s to target; authority is the Host
// header, else the member's address and port [M].
func (s *h2Send) request(ctx context.Context, target netip.AddrPort, tls bool) (*http.Request, error) {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	host := s.host
	if host == "" {
		host = target.String()
	}
	u := &url.URL{Scheme: scheme, Host: host, Opaque: s.target}
	var body io.Reader
	if s.body != "" {
		body = strings.NewReader(s.body)
	}
	req, err := http.NewRequestWithContext(ctx, s.method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("send: %v", err)
	}
	req.URL.Opaque = s.target
	req.Host = host
	req.Header = s.header.Clone()
	if s.body != "" {
		req.ContentLength = int64(len(s.body))
	}
	return req, nil
}

// probeHTTP2 sends the send string as one HTTP/2 stream, over TLS with
// ALPN h2 when the monitor has TLS (ssl-profile), else cleartext with
// prior knowledge (h2c), and judges the answer written as HTTP/1 text:
// "HTTP/2.0 200 OK", the header fields, a blank line and the body [M].
func probeHTTP2(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	send := spec.Send
	if spec.Username != "" {
		if send == "" {
			send = "GET /\r\n"
		}
		send = basicAuthSend(send, spec.Username, spec.Password)
	}
	s, err := parseH2Send(send)
	if err != nil {
		return Outcome{}, err
	}
	req, err := s.request(ctx, target, spec.TLS != nil)
	if err != nil {
		return Outcome{}, err
	}
	tc, err := dial(ctx, target)
	if err != nil {
		return Outcome{}, err
	}
	defer tc.Close()
	if dl, ok := ctx.Deadline(); ok {
		tc.SetDeadline(dl)
	}
	var conn net.Conn = tc
	if spec.TLS != nil {
		cfg, err := spec.TLS.config(send)
		if err != nil {
			return Outcome{}, err
		}
		if cfg.ServerName == "" && s.host != "" {
			cfg.ServerName = hostOnly(s.host)
		}
		cfg.NextProtos = []string{http2.NextProtoTLS}
		sc := tls.Client(tc, cfg)
		if err := sc.HandshakeContext(ctx); err != nil {
			if timedOut(ctx, err) {
				return Outcome{}, ErrNoResponse
			}
			return Outcome{}, fmt.Errorf("SSL handshake failed; %v", unwrapSyscall(err))
		}
		if p := sc.ConnectionState().NegotiatedProtocol; p != http2.NextProtoTLS {
			return Outcome{}, fmt.Errorf("Server did not choose HTTP/2 (ALPN h2 offered, %s chosen)", orNoneProto(p))
		}
		conn = sc
	}
	cc, err := h2Transport.NewClientConn(conn)
	if err != nil {
		return Outcome{}, fmt.Errorf("Unable to send; %v", unwrapSyscall(err))
	}
	defer cc.Close()
	resp, err := cc.RoundTrip(req)
	if err != nil {
		if timedOut(ctx, err) {
			return Outcome{}, ErrNoResponse
		}
		return Outcome{}, fmt.Errorf("HTTP/2 request failed; %v", unwrapSyscall(err))
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "HTTP/2.0 %d %s\r\n", resp.StatusCode, http.StatusText(resp.StatusCode))
	resp.Header.Write(&buf)
	buf.WriteString("\r\n")
	chunk := make([]byte, 4096)
	for buf.Len() < maxReply {
		n, rerr := resp.Body.Read(chunk)
		buf.Write(chunk[:n])
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) && !timedOut(ctx, rerr) {
				return Outcome{}, fmt.Errorf("HTTP/2 response failed; %v", rerr)
			}
			break
		}
		if o, done := judge(spec, buf.Bytes(), false); done && (spec.Recv != nil || spec.RecvDisable != nil) {
			return verdict(o)
		}
	}
	if o, done := judge(spec, buf.Bytes(), true); done {
		return verdict(o)
	}
	return Outcome{}, ErrNoMatch
}

// timedOut reports whether err is the probe's deadline: the context's,
// or the connection's (set to the same instant, it may fire first).
func timedOut(ctx context.Context, err error) bool {
	var ne net.Error
	return ctx.Err() != nil || (errors.As(err, &ne) && ne.Timeout())
}

// hostOnly is a Host header's name without its port.
func hostOnly(h string) string {
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
		if _, err := strconv.Atoi(h[i+1:]); err == nil {
			h = h[:i]
		}
	}
	return strings.Trim(h, "[]")
}

func orNoneProto(p string) string {
	if p == "" {
		return "none"
	}
	return p
}
