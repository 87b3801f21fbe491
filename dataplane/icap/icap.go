// Package icap is the ICAP client (RFC 3507) behind the request-adapt and
// response-adapt profiles: an HTTP request or response goes to an ICAP
// server (an antivirus, a DLP engine) as REQMOD or RESPMOD, and comes back
// unchanged (204), modified, or replaced by the server's own answer (a
// blocking page in place of a request).
package icap

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
)

// Mode is the ICAP method of an exchange.
type Mode int

// The two modification methods. OPTIONS is sent by the client itself
// (Client.options) when it does not know the server's yet.
const (
	ReqMod Mode = iota
	RespMod
)

func (m Mode) String() string {
	if m == RespMod {
		return "RESPMOD"
	}
	return "REQMOD"
}

// Service is one icap profile as the client uses it: where to send and
// with which request headers. It is immutable once built; Exchange may
// run on many goroutines at once.
type Service struct {
	// URI is the profile's uri; ${SERVER_IP} and ${SERVER_PORT} become
	// the ICAP server's address and port chosen for the exchange.
	URI string
	// Host, From, Referer and UserAgent are header-from, host, referer
	// and user-agent: ICAP request header fields, left out when empty.
	// Without host, Host is the URI's authority, which RFC 3507 needs.
	Host, From, Referer, UserAgent string
	// Preview is how many body bytes go first in a preview (Preview:
	// header), the rest only on the server's 100 Continue; 0 leaves it to
	// the server: its OPTIONS Preview, at most ServerPreview (0 none).
	// A server's Preview smaller than Preview caps it too.
	Preview, ServerPreview int
	// Client holds the connections and the OPTIONS answers kept between
	// exchanges; nil: one shared by every Service.
	Client *Client
	// Timeout bounds a whole exchange, connect included; 0: none of its
	// own (ConnectTimeout still bounds the connect).
	Timeout        time.Duration
	ConnectTimeout time.Duration
	// MaxSize bounds what the server may send back (headers and body);
	// 0: 16 MiB.
	MaxSize int
}

// Outcome says what the ICAP server made of a message.
type Outcome int

const (
	// Unmodified: 204, or a 200 giving the message back as it was sent
	// is still Modified: the client does not compare.
	Unmodified Outcome = iota
	// Modified: Msg is the adapted message of the same kind (a request
	// for REQMOD, a response for RESPMOD).
	Modified
	// Answered: Msg is an HTTP response the server gives in place of a
	// request (REQMOD only): the client gets it, no member sees the
	// request.
	Answered
)

func (o Outcome) String() string {
	switch o {
	case Modified:
		return "modified"
	case Answered:
		return "answered"
	}
	return "unmodified"
}

// Result is one exchange's outcome. Msg is a whole HTTP message framed
// by Content-Length (the server's chunks decoded), nil when Unmodified.
type Result struct {
	Outcome Outcome
	Msg     []byte
	// Status is the ICAP status line's code (204, 200); 0 when the
	// message was not sent (Ignored).
	Status int
	// ISTag is the service's tag in the answer (its version).
	ISTag string
	// Ignored: the server's OPTIONS listed the message's extension in
	// Transfer-Ignore, so it was not sent (Outcome Unmodified).
	Ignored bool
}

// Message is what goes to the server: for REQMOD the request's head and
// body; for RESPMOD the request's head (no body) and the response's head
// and body. Bodies are the entity as it is, without transfer coding.
type Message struct {
	ReqHead, ReqBody   []byte
	RespHead, RespBody []byte
	// Hooks, when set, see and may edit the ICAP request's head before
	// it leaves and the answer's head when it arrives (the internal
	// virtual server's ICAP_REQUEST and ICAP_RESPONSE rules); an error
	// fails the exchange.
	Hooks Hooks
	// Partial: the body is only the start of one that goes on (a
	// message streamed past the engine's bound, not held whole), so it
	// can go only as a preview, without ieof: a 204 or a final answer
	// to the preview ends the exchange, and a server that asks for the
	// rest (100 Continue), or a service that takes no preview, fails it
	// with ErrWhole.
	Partial bool
}

// Hooks are the rules of the internal virtual server run on one
// exchange's ICAP messages.
type Hooks interface {
	// Request runs just before the request is written: h.URI and
	// h.Fields may be changed (Encapsulated and Preview are set again
	// from the message after it).
	Request(h *Head) error
	// Response runs when the answer's head arrived (not for 100
	// Continue): field edits apply to how the answer is read.
	Response(h *Head) error
}

// Head is an ICAP message's first line and header fields, in order, as
// Hooks see them.
type Head struct {
	Method, URI string
	// Status is the answer's code (0 in a request).
	Status int
	Fields [][2]string
	// Request and Response are the heads of the encapsulated HTTP
	// message (nil: none): in a request, those about to go (a hook may
	// replace them; Encapsulated follows); in an answer, the one the
	// server sent back (a replaced head goes on with its body), or, for
	// another status than 200, those that went, ReadOnly.
	Request, Response []byte
	ReadOnly          bool
}

// ErrStatus is an ICAP answer other than 100, 200 and 204: the service
// failed, and the caller applies its service-down-action.
var ErrStatus = errors.New("icap: the server answered with an error status")

// ErrWhole is the failure of an exchange over a Partial message that
// only the whole message could settle: the caller holds no more than
// the preview, so it treats the message as one too large to adapt.
var ErrWhole = errors.New("icap: the server wants the whole of a message streamed past the preview")

// MaxPreview is the most body bytes a preview of this service may take
// (0: none goes): how much of a streamed body the caller holds before
// the exchange.
func (s *Service) MaxPreview() int {
	if s.Preview > 0 {
		return s.Preview
	}
	return s.ServerPreview
}

// URIFor is the service URI for the server at addr.
func (s *Service) URIFor(addr netip.AddrPort) string {
	u := strings.ReplaceAll(s.URI, "${SERVER_IP}", addr.Addr().String())
	return strings.ReplaceAll(u, "${SERVER_PORT}", strconv.Itoa(int(addr.Port())))
}

// Exchange sends one message to the ICAP server at addr, on a
// connection kept from an earlier exchange when there is one, and reads
// the answer. ctx may end it early. A kept connection the server closed
// meanwhile (nothing answered yet) is retried once on a fresh one.
func (s *Service) Exchange(ctx context.Context, addr netip.AddrPort, mode Mode, m *Message) (Result, error) {
	r, _, err := s.exchangeStream(ctx, addr, mode, m, false)
	return r, err
}

// ExchangeStream is Exchange for a Partial message whose caller can send
// the rest of its body as it comes: where Exchange fails with ErrWhole
// (the server asked for the rest after the preview, or the service
// takes no preview), it returns a Rest to send it on and read the
// answer with. The request then does not offer a 204 beyond the preview
// (no Allow: 204): the body is not held, so only a 200 can follow the
// whole of it.
func (s *Service) ExchangeStream(ctx context.Context, addr netip.AddrPort, mode Mode, m *Message) (Result, *Rest, error) {
	return s.exchangeStream(ctx, addr, mode, m, true)
}

func (s *Service) exchangeStream(ctx context.Context, addr netip.AddrPort, mode Mode, m *Message, stream bool) (Result, *Rest, error) {
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	cl := s.Client
	if cl == nil {
		cl = sharedClient
	}
	uri := s.URIFor(addr)
	opt, err := cl.options(ctx, s, addr, uri)
	if err != nil {
		return Result{}, nil, err
	}
	preview := -1 // none
	if s.Preview > 0 {
		preview = s.Preview
	}
	if opt != nil {
		switch opt.transfer(extension(m.ReqHead)) {
		case transferIgnore:
			return Result{Outcome: Unmodified, Ignored: true}, nil, nil
		case transferComplete:
			preview = -1
		default:
			if opt.Preview >= 0 && s.Preview > 0 {
				preview = min(s.Preview, opt.Preview)
			} else if opt.Preview >= 0 && s.ServerPreview > 0 {
				preview = min(opt.Preview, s.ServerPreview)
			}
		}
	}
	if m.Partial && preview < 0 && !stream {
		return Result{}, nil, ErrWhole
	}
	for try := 0; ; try++ {
		pc, reused, err := cl.get(ctx, addr, s.ConnectTimeout)
		if err != nil {
			return Result{}, nil, err
		}
		r, keep, answered, err := pc.run(ctx, func() (Result, bool, bool, error) {
			return s.exchange(pc, uri, mode, m, preview, stream)
		})
		if err == errRest {
			return Result{}, &Rest{s: s, cl: cl, pc: pc, addr: addr, uri: uri, mode: mode, hooks: m.Hooks, opt: opt, req: m.ReqHead, resp: m.RespHead}, nil
		}
		if keep && err == nil {
			cl.put(addr, pc)
		} else {
			pc.c.Close()
		}
		if err != nil && reused && !answered && try == 0 && ctx.Err() == nil && stale(err) {
			continue
		}
		if err == nil && opt != nil && r.ISTag != "" && opt.ISTag != "" && r.ISTag != opt.ISTag {
			cl.forget(addr, uri) // the service changed: learn its OPTIONS again
		}
		return r, nil, err
	}
}

// errRest is exchange's word that the rest of a Partial body is to be
// sent (ExchangeStream).
var errRest = errors.New("icap: the rest of the body is wanted")

// ErrLate204 is a 204 after the whole of a streamed body: the caller
// holds none of it, so the message cannot go on unchanged.
var ErrLate204 = errors.New("icap: 204 after the whole of a streamed body, which is not held")

// Rest is an exchange over a Partial message whose server wants the
// rest of the body (or that goes without preview): the caller sends the
// body on with Write as it arrives, then Finish reads the answer. The
// Service's timeout bounds each write and the wait for the answer, not
// the whole (a client's upload may take long) [M].
type Rest struct {
	s     *Service
	cl    *Client
	pc    *conn
	addr  netip.AddrPort
	uri   string
	mode  Mode
	hooks Hooks
	opt   *Options
	buf   []byte
	// req and resp are the encapsulated heads (for the hooks).
	req, resp []byte
}

// deadline bounds the next wait on the server by the Service's timeout.
func (r *Rest) deadline() {
	if r.s.Timeout > 0 {
		r.pc.c.SetDeadline(time.Now().Add(r.s.Timeout))
	} else {
		r.pc.c.SetDeadline(time.Time{})
	}
}

// Write sends p, the next bytes of the body (transfer coding removed),
// as one chunk.
func (r *Rest) Write(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	r.deadline()
	r.buf = httpx.AppendChunk(r.buf[:0], p)
	_, err := r.pc.c.Write(r.buf)
	return err
}

// Finish ends the body and reads the answer: Modified or Answered with
// the message, ErrLate204 for a 204 (nothing held to go on with), or
// the exchange's failure. The connection is kept when it may serve
// another exchange.
func (r *Rest) Finish() (Result, error) {
	r.deadline()
	if _, err := r.pc.c.Write([]byte("0\r\n\r\n")); err != nil {
		r.Abort()
		return Result{}, err
	}
	status, hdr, err := readHead(r.pc.r, r.hooks)
	for err == nil && status == 100 {
		status, hdr, err = readHead(r.pc.r, r.hooks) // (a late 100 Continue, said twice)
	}
	var res Result
	if err == nil && status == 200 {
		res, err = r.s.readEncapsulated(r.pc.r, r.mode, hdr)
	}
	if err == nil && r.hooks != nil {
		hdr, res, err = hookAnswer(r.hooks, r.mode, r.uri, status, hdr, res, r.req, r.resp)
	}
	if err != nil {
		r.Abort()
		return Result{}, err
	}
	keep := !strings.EqualFold(hdr["connection"], "close")
	switch status {
	case 204:
		// Nothing follows a 204: the connection stays in step.
		res, err = Result{Status: 204, ISTag: hdr["istag"]}, ErrLate204
	case 200:
		res.ISTag = hdr["istag"]
	default:
		res, err, keep = Result{Status: status}, fmt.Errorf("%w: %d", ErrStatus, status), false
	}
	if keep {
		r.pc.c.SetDeadline(time.Time{})
		r.cl.put(r.addr, r.pc)
		r.pc = nil
	} else {
		r.Abort()
	}
	if res.ISTag != "" && r.opt != nil && r.opt.ISTag != "" && res.ISTag != r.opt.ISTag {
		r.cl.forget(r.addr, r.uri)
	}
	return res, err
}

// Abort gives the exchange up: the connection, out of step, is closed.
func (r *Rest) Abort() {
	if r.pc != nil {
		r.pc.c.Close()
		r.pc = nil
	}
}

// stale reports whether err is what a kept connection the server closed
// while it was idle gives.
func stale(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// exchange sends one request on pc (preview: bytes of body in a
// preview, -1 none) and reads its answer; keep says the
// connection may serve another exchange, answered that the server sent
// something (a retry would not be safe).
func (s *Service) exchange(pc *conn, uri string, mode Mode, m *Message, preview int, stream bool) (res Result, keep, answered bool, err error) {
	body := m.ReqBody
	if mode == RespMod {
		body = m.RespBody
	}
	var b bytes.Buffer
	if preview >= 0 {
		preview = min(preview, len(body))
	}
	reqHead, respHead := m.ReqHead, m.RespHead
	enc := encapsulated(mode, reqHead, respHead)
	// A streamed message whose rest goes on to the server is not held:
	// only a 204 to its preview can be taken (RFC 3507 4.5 allows one
	// without Allow: 204), so the request does not offer 204 [M].
	allow204 := !(stream && m.Partial)
	if m.Hooks == nil {
		b.WriteString(mode.String() + " " + uri + " ICAP/1.0\r\n")
		s.writeCommon(&b, uri)
		if allow204 {
			b.WriteString("Allow: 204\r\n")
		}
		if preview >= 0 {
			b.WriteString("Preview: " + strconv.Itoa(preview) + "\r\n")
		}
		b.WriteString("Encapsulated: " + enc + "\r\n\r\n")
	} else if err := s.hookedHead(&b, m.Hooks, uri, mode, preview, enc, allow204, &reqHead, &respHead); err != nil {
		return Result{}, false, false, err
	}
	b.Write(reqHead)
	if mode == RespMod {
		b.Write(respHead)
	}
	// The body always goes chunked, an empty one as a lone last chunk
	// (req-body rather than null-body keeps one shape; RFC 3507 allows
	// it).
	rest := body
	if preview >= 0 {
		writeChunk(&b, body[:preview])
		rest = body[preview:]
		if len(rest) == 0 && !m.Partial {
			b.WriteString("0; ieof\r\n\r\n")
		} else {
			b.WriteString("0\r\n\r\n")
		}
	} else {
		writeChunk(&b, body)
		if stream && m.Partial {
			// No preview: the rest of the body follows at once (Rest).
			if _, err := pc.c.Write(b.Bytes()); err != nil {
				return Result{}, false, false, err
			}
			return Result{}, false, false, errRest
		}
		b.WriteString("0\r\n\r\n")
		rest = nil
	}
	if _, err := pc.c.Write(b.Bytes()); err != nil {
		return Result{}, false, false, err
	}
	for {
		status, hdr, err := readHead(pc.r, m.Hooks)
		if err != nil {
			return Result{}, false, answered, err
		}
		answered = true
		var r Result
		if status == 200 {
			if r, err = s.readEncapsulated(pc.r, mode, hdr); err != nil {
				return Result{}, false, true, err
			}
		}
		if m.Hooks != nil && status != 100 {
			if hdr, r, err = hookAnswer(m.Hooks, mode, uri, status, hdr, r, reqHead, respHead); err != nil {
				return Result{}, false, true, err
			}
		}
		keep = !strings.EqualFold(hdr["connection"], "close")
		switch {
		case status == 100 && m.Partial && stream:
			// What the caller held beyond the preview goes first.
			if len(rest) > 0 {
				b.Reset()
				writeChunk(&b, rest)
				if _, err := pc.c.Write(b.Bytes()); err != nil {
					return Result{}, false, true, err
				}
			}
			return Result{}, false, true, errRest
		case status == 100 && m.Partial:
			return Result{}, false, true, ErrWhole
		case status == 100:
			if preview < 0 || len(rest) == 0 {
				return Result{}, false, true, fmt.Errorf("icap: 100 Continue with nothing left to send")
			}
			b.Reset()
			writeChunk(&b, rest)
			b.WriteString("0\r\n\r\n")
			if _, err := pc.c.Write(b.Bytes()); err != nil {
				return Result{}, false, true, err
			}
			rest = nil
			continue
		case status == 204:
			return Result{Outcome: Unmodified, Status: 204, ISTag: hdr["istag"]}, keep, true, nil
		case status == 200:
			r.ISTag = hdr["istag"]
			return r, keep, true, nil
		}
		// An error status with a body would leave the connection out of
		// step: it is not kept.
		return Result{Status: status}, false, true, fmt.Errorf("%w: %d", ErrStatus, status)
	}
}

// hookedHead writes the request's head after the hooks saw it: in the
// order they left the fields, with Encapsulated and Preview (removed
// when preview < 0) set from the message whatever they did.
func (s *Service) hookedHead(b *bytes.Buffer, hk Hooks, uri string, mode Mode, preview int, enc string, allow204 bool, req, resp *[]byte) error {
	var c bytes.Buffer
	s.writeCommon(&c, uri)
	h := &Head{Method: mode.String(), URI: uri, Request: *req}
	if mode == RespMod {
		h.Response = *resp
	}
	for _, l := range strings.Split(strings.TrimSuffix(c.String(), "\r\n"), "\r\n") {
		k, v, _ := strings.Cut(l, ": ")
		h.Fields = append(h.Fields, [2]string{k, v})
	}
	if allow204 {
		h.Fields = append(h.Fields, [2]string{"Allow", "204"})
	}
	if preview >= 0 {
		h.Fields = append(h.Fields, [2]string{"Preview", strconv.Itoa(preview)})
	}
	h.Fields = append(h.Fields, [2]string{"Encapsulated", enc})
	if err := hk.Request(h); err != nil {
		return err
	}
	if h.URI == "" || strings.ContainsAny(h.URI, " \r\n") {
		return fmt.Errorf("icap: the rules made an invalid URI %q", h.URI)
	}
	if !bytes.Equal(h.Request, *req) || mode == RespMod && !bytes.Equal(h.Response, *resp) {
		if _, err := httpx.ParseRequest(h.Request); err != nil {
			return fmt.Errorf("icap: the rules made an invalid HTTP request head: %v", err)
		}
		if mode == RespMod {
			if _, err := httpx.ParseResponse(h.Response); err != nil {
				return fmt.Errorf("icap: the rules made an invalid HTTP response head: %v", err)
			}
		}
		*req, *resp = h.Request, h.Response
		enc = encapsulated(mode, *req, *resp)
	}
	b.WriteString(mode.String() + " " + h.URI + " ICAP/1.0\r\n")
	for _, f := range h.Fields {
		switch strings.ToLower(f[0]) {
		case "encapsulated", "preview":
			continue
		}
		if f[0] == "" || strings.ContainsAny(f[0], ": \r\n") || strings.ContainsAny(f[1], "\r\n") {
			return fmt.Errorf("icap: the rules made an invalid header field %q", f[0])
		}
		b.WriteString(f[0] + ": " + f[1] + "\r\n")
	}
	if preview >= 0 {
		b.WriteString("Preview: " + strconv.Itoa(preview) + "\r\n")
	}
	b.WriteString("Encapsulated: " + enc + "\r\n\r\n")
	return nil
}

// hookAnswer runs the Response hook over an answer's head (status,
// hdr) and the encapsulated message of a 200 (r), or the heads that went
// (req, resp: read only) for another status. It returns the fields as
// the rest of the exchange reads them and r with the head the hook left.
func hookAnswer(hk Hooks, mode Mode, uri string, status int, hdr map[string]string, r Result, req, resp []byte) (map[string]string, Result, error) {
	h := &Head{Method: mode.String(), URI: uri, Status: status, Fields: orderedOf(hdr)}
	end := 0
	if r.Msg != nil {
		end = bytes.Index(r.Msg, []byte("\r\n\r\n")) + 4
		if r.Outcome == Modified && mode == ReqMod {
			h.Request = r.Msg[:end]
		} else {
			h.Response = r.Msg[:end]
		}
	} else {
		h.Request, h.ReadOnly = req, true
		if mode == RespMod {
			h.Response = resp
		}
	}
	if err := hk.Response(h); err != nil {
		return nil, r, err
	}
	out := make(map[string]string, len(h.Fields))
	for _, f := range h.Fields {
		out[strings.ToLower(f[0])] = f[1]
	}
	if r.Msg != nil {
		head, parse := h.Response, func(b []byte) error { _, err := httpx.ParseResponse(b); return err }
		if r.Outcome == Modified && mode == ReqMod {
			head, parse = h.Request, func(b []byte) error { _, err := httpx.ParseRequest(b); return err }
		}
		if !bytes.Equal(head, r.Msg[:end]) {
			msg := Frame(head, r.Msg[end:])
			if err := parse(msg); err != nil {
				return nil, r, fmt.Errorf("icap: the rules made an invalid HTTP head: %v", err)
			}
			r.Msg = msg
		}
	}
	return out, r, nil
}

// encapsulated is the Encapsulated field of a request with these heads.
func encapsulated(mode Mode, req, resp []byte) string {
	enc := "req-hdr=0"
	n := len(req)
	if mode == RespMod {
		enc += ", res-hdr=" + strconv.Itoa(n)
		n += len(resp)
		return enc + ", res-body=" + strconv.Itoa(n)
	}
	return enc + ", req-body=" + strconv.Itoa(n)
}

// orderedOf takes back the fields readHead kept in order for hooks.
func orderedOf(hdr map[string]string) [][2]string {
	var out [][2]string
	for _, l := range strings.Split(hdr[orderKey], "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			out = append(out, [2]string{k, v})
		}
	}
	return out
}

// orderKey holds, in a head readHead read for hooks, the fields with
// their names as sent and in order ("Name:value" lines); no field name
// can contain a space.
const orderKey = " order"

// writeCommon writes the header fields every request carries.
func (s *Service) writeCommon(b *bytes.Buffer, uri string) {
	host := s.Host
	if host == "" {
		host = authority(uri)
	}
	b.WriteString("Host: " + host + "\r\n")
	for _, f := range [][2]string{{"From", s.From}, {"Referer", s.Referer}, {"User-Agent", s.UserAgent}} {
		if f[1] != "" {
			b.WriteString(f[0] + ": " + f[1] + "\r\n")
		}
	}
}

// readEncapsulated reads a 200's encapsulated message.
func (s *Service) readEncapsulated(r *bufio.Reader, mode Mode, hdr map[string]string) (Result, error) {
	max := s.MaxSize
	if max <= 0 {
		max = 16 << 20
	}
	parts, err := parseEncapsulated(hdr["encapsulated"])
	if err != nil {
		return Result{}, err
	}
	var headEnd int
	var hasBody bool
	for _, p := range parts {
		switch p.name {
		case "req-body", "res-body", "opt-body":
			headEnd, hasBody = p.off, true
		case "null-body":
			headEnd = p.off
		}
	}
	if headEnd > max {
		return Result{}, fmt.Errorf("icap: encapsulated headers of %d bytes", headEnd)
	}
	heads := make([]byte, headEnd)
	if _, err := io.ReadFull(r, heads); err != nil {
		return Result{}, err
	}
	var reqHead, resHead []byte
	for i, p := range parts {
		end := headEnd
		if i+1 < len(parts) {
			end = parts[i+1].off
		}
		if p.off > end || end > len(heads) {
			return Result{}, fmt.Errorf("icap: Encapsulated offsets out of order")
		}
		switch p.name {
		case "req-hdr":
			reqHead = heads[p.off:end]
		case "res-hdr":
			resHead = heads[p.off:end]
		}
	}
	var body []byte
	if hasBody {
		if body, err = readChunked(r, max); err != nil {
			return Result{}, err
		}
	}
	res := Result{Outcome: Modified, Status: 200}
	head := reqHead
	if resHead != nil {
		head = resHead
		if mode == ReqMod {
			res.Outcome = Answered
		}
	} else if mode == RespMod {
		return Result{}, fmt.Errorf("icap: RESPMOD answer without res-hdr")
	}
	if len(head) == 0 {
		return Result{}, fmt.Errorf("icap: 200 without an encapsulated message")
	}
	res.Msg = Frame(head, body)
	return res, nil
}

// Frame is an HTTP message from a head and its whole body, framed by
// Content-Length (a transfer coding the head named removed). A request
// without a body and without framing gets none, as HTTP/1.1 allows.
func Frame(head, body []byte) []byte {
	if !bytes.HasSuffix(head, []byte("\r\n\r\n")) {
		head = append(bytes.TrimRight(head, "\r\n"), "\r\n\r\n"...)
	}
	out := httpx.SetContentLength(nil, head, len(body))
	return append(out, body...)
}

func writeChunk(b *bytes.Buffer, p []byte) {
	if len(p) == 0 {
		return
	}
	b.WriteString(strconv.FormatInt(int64(len(p)), 16))
	b.WriteString("\r\n")
	b.Write(p)
	b.WriteString("\r\n")
}

// authority is the host[:port] of an icap:// URI.
func authority(uri string) string {
	_, rest, ok := strings.Cut(uri, "://")
	if !ok {
		rest = uri
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// readHead reads an ICAP status line and header fields (names in lower
// case); with hooks, the fields as sent in order too (orderKey).
func readHead(r *bufio.Reader, hooks Hooks) (int, map[string]string, error) {
	line, err := readLine(r)
	if err != nil {
		return 0, nil, err
	}
	f := strings.Fields(line)
	if len(f) < 2 || !strings.HasPrefix(f[0], "ICAP/") {
		return 0, nil, fmt.Errorf("icap: bad status line %q", line)
	}
	code, err := strconv.Atoi(f[1])
	if err != nil {
		return 0, nil, fmt.Errorf("icap: bad status line %q", line)
	}
	hdr, err := readFields(r, hooks != nil)
	return code, hdr, err
}

// ReadFields reads header fields up to the blank line, names in lower
// case (for the test server too).
func ReadFields(r *bufio.Reader) (map[string]string, error) { return readFields(r, false) }

func readFields(r *bufio.Reader, order bool) (map[string]string, error) {
	hdr := map[string]string{}
	var ord strings.Builder
	for n := 0; ; n++ {
		if n > 100 {
			return nil, errors.New("icap: too many header fields")
		}
		line, err := readLine(r)
		if err != nil {
			return nil, err
		}
		if line == "" {
			if order {
				hdr[orderKey] = ord.String()
			}
			return hdr, nil
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("icap: bad header line %q", line)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		hdr[strings.ToLower(k)] = v
		if order {
			if ord.Len() > 0 {
				ord.WriteByte('\n')
			}
			ord.WriteString(k + ":" + v)
		}
	}
}

func readLine(r *bufio.Reader) (string, error) {
	l, err := r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return "", errors.New("icap: line too long")
		}
		return "", err
	}
	return strings.TrimRight(string(l), "\r\n"), nil
}

type part struct {
	name string
	off  int
}

// parseEncapsulated reads "req-hdr=0, res-hdr=120, res-body=300".
func parseEncapsulated(v string) ([]part, error) {
	if v == "" {
		return nil, errors.New("icap: 200 without Encapsulated")
	}
	var out []part
	for _, f := range strings.Split(v, ",") {
		k, n, ok := strings.Cut(strings.TrimSpace(f), "=")
		off, err := strconv.Atoi(n)
		if !ok || err != nil || off < 0 || len(out) > 0 && off < out[len(out)-1].off {
			return nil, fmt.Errorf("icap: bad Encapsulated %q", v)
		}
		out = append(out, part{strings.ToLower(k), off})
	}
	return out, nil
}

// ReadChunked reads a chunked body to its last chunk (extensions such
// as ieof kept in ext of the last one), at most max bytes.
func ReadChunked(r *bufio.Reader, max int) (body []byte, lastExt string, err error) {
	for n := 0; ; n++ {
		line, err := readLine(r)
		if err != nil {
			return nil, "", err
		}
		size, ext, _ := strings.Cut(line, ";")
		k, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if err != nil || k < 0 {
			return nil, "", fmt.Errorf("icap: bad chunk size %q", line)
		}
		if k == 0 {
			for {
				l, err := readLine(r) // trailer fields, then the blank line
				if err != nil {
					return nil, "", err
				}
				if l == "" {
					return body, strings.TrimSpace(ext), nil
				}
			}
		}
		if len(body)+int(k) > max {
			return nil, "", fmt.Errorf("icap: body over %d bytes", max)
		}
		start := len(body)
		body = append(body, make([]byte, k)...)
		if _, err := io.ReadFull(r, body[start:]); err != nil {
			return nil, "", err
		}
		if l, err := readLine(r); err != nil || l != "" {
			return nil, "", errors.New("icap: chunk not followed by CRLF")
		}
	}
}

func readChunked(r *bufio.Reader, max int) ([]byte, error) {
	b, _, err := ReadChunked(r, max)
	return b, err
}
