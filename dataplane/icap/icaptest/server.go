// Package icaptest is a small ICAP server (RFC 3507) for tests and for
// tcpkit's icap command: it rewrites a header, blocks a body carrying a
// word with a 403 page, and answers 204 otherwise, honouring previews,
// so that adaptation can be tried without an antivirus.
package icaptest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/icap"
)

// Config says what the server does with each message.
type Config struct {
	// Block: a body containing this word is refused with a 403 page
	// (REQMOD: the page answers the client; RESPMOD: it replaces the
	// response). Empty: nothing is blocked.
	Block string
	// Header and Value: a message carrying field Header gets it set to
	// Value (the message is then modified). Empty Header: no rewrite.
	Header, Value string
	// Add is a field line ("Name: value") added to every message the
	// server modifies, so a member or client can see it went through.
	Add string
	// Preview, when above 0, is the Preview its OPTIONS answer asks for
	// (none otherwise: the client's profile decides).
	Preview int
	// Ignore is its OPTIONS answer's Transfer-Ignore ("jpg, gif").
	Ignore string
	// TTL is its OPTIONS answer's Options-TTL in seconds (0: none sent).
	TTL int
	// ISTag is the service's tag (default "openltm-test").
	ISTag string
	// PerConn closes a connection after that many requests (OPTIONS
	// included) without a word, as a server's idle timeout does between
	// two exchanges; 0: never.
	PerConn int
	// Log, when set, gets a line per exchange ("OPTIONS", "REQMOD 204",
	// "RESPMOD modified", "REQMOD blocked", "REQMOD preview 16"), from
	// the connection's goroutine.
	Log func(string)
	// Show lists ICAP request header fields (lower case) logged for
	// each REQMOD and RESPMOD as "REQMOD uri URI" and "REQMOD name:
	// value" (a field absent: "REQMOD name absent"), to see what a
	// client's rules made of its requests.
	Show []string
	// Answer is a field line ("X-Infection-Found: none") added to the
	// ICAP head of every 204 and 200 it sends.
	Answer string
	// DecidePreview answers on the preview alone, as a scanner that
	// judges by a file's start does: never 100 Continue; 204 unless the
	// preview holds the Block word or the message a Header to rewrite
	// (the rewritten message then carries the preview's bytes only: the
	// rest of the body was never seen).
	DecidePreview bool
	// Always204 answers 204 to an unchanged message even to a request
	// without Allow: 204, as a server that ignores RFC 3507 there does.
	Always204 bool
}

// Stats counts what the server saw, for tests.
type Stats struct {
	Conns                           atomic.Int64
	ReqMod, RespMod, Options        atomic.Int64
	NoContent, Modified, Blocked    atomic.Int64
	Continues, Previews, PreviewEOF atomic.Int64
	// Echoed counts the messages sent back whole, unchanged, to a
	// request without Allow: 204.
	Echoed atomic.Int64
}

// Server is a running ICAP server.
type Server struct {
	Config
	Stats Stats
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{} // open, closed by Close
	done  bool
}

// Listen starts a server on addr ("127.60.0.1:1344").
func Listen(addr string, cfg Config) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{Config: cfg, ln: ln}
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// Addr is where the server listens.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops accepting, closes the connections clients keep open
// between exchanges, and waits for their goroutines.
func (s *Server) Close() error {
	err := s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.conns, s.done = nil, true
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.done {
			s.mu.Unlock()
			c.Close()
			return
		}
		if s.conns == nil {
			s.conns = map[net.Conn]struct{}{}
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		s.Stats.Conns.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			r := bufio.NewReader(c)
			most := 10000
			if s.PerConn > 0 {
				most = s.PerConn
			}
			for n := 0; n < most; n++ {
				if err := s.one(c, r); err != nil {
					return
				}
			}
		}()
	}
}

const blockPage = "<html><body><h1>403 Forbidden</h1>The content was blocked by the ICAP service.</body></html>\n"

// one serves one ICAP request on c.
func (s *Server) one(c net.Conn, r *bufio.Reader) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	f := strings.Fields(line)
	if len(f) < 3 {
		return fmt.Errorf("bad request line %q", line)
	}
	hdr, err := icap.ReadFields(r)
	if err != nil {
		return err
	}
	method := f[0]
	switch method {
	case "OPTIONS":
		s.Stats.Options.Add(1)
		s.log("OPTIONS")
		a := "ICAP/1.0 200 OK\r\nMethods: REQMOD, RESPMOD\r\nAllow: 204\r\nISTag: \"" + s.istag() + "\"\r\n"
		if s.Preview > 0 {
			a += "Preview: " + strconv.Itoa(s.Preview) + "\r\nTransfer-Preview: *\r\n"
		}
		if s.Ignore != "" {
			a += "Transfer-Ignore: " + s.Ignore + "\r\n"
		}
		if s.TTL > 0 {
			a += "Options-TTL: " + strconv.Itoa(s.TTL) + "\r\n"
		}
		_, err := c.Write([]byte(a + "Encapsulated: null-body=0\r\n\r\n"))
		return err
	case "REQMOD", "RESPMOD":
		if method == "REQMOD" {
			s.Stats.ReqMod.Add(1)
		} else {
			s.Stats.RespMod.Add(1)
		}
		if len(s.Show) > 0 {
			s.log(method + " uri " + f[1])
			for _, n := range s.Show {
				if v, ok := hdr[n]; ok {
					s.log(method + " " + n + ": " + v)
				} else {
					s.log(method + " " + n + " absent")
				}
			}
		}
	default:
		_, err := c.Write([]byte("ICAP/1.0 405 Method Not Allowed\r\nEncapsulated: null-body=0\r\n\r\n"))
		return err
	}
	type part struct {
		name string
		off  int
	}
	var parts []part
	for _, e := range strings.Split(hdr["encapsulated"], ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(e), "=")
		n, _ := strconv.Atoi(v)
		parts = append(parts, part{k, n})
	}
	if len(parts) == 0 {
		return fmt.Errorf("no Encapsulated")
	}
	last := parts[len(parts)-1]
	heads := make([]byte, last.off)
	if _, err := ioReadFull(r, heads); err != nil {
		return err
	}
	var reqHead, resHead []byte
	for i, p := range parts[:len(parts)-1] {
		seg := heads[p.off:parts[i+1].off]
		switch p.name {
		case "req-hdr":
			reqHead = seg
		case "res-hdr":
			resHead = seg
		}
	}
	var body []byte
	hasBody := last.name != "null-body"
	if hasBody {
		b, ext, err := icap.ReadChunked(r, 64<<20)
		if err != nil {
			return err
		}
		body = b
		if _, ok := hdr["preview"]; ok {
			s.Stats.Previews.Add(1)
			s.log(method + " preview " + hdr["preview"])
			if ext == "ieof" {
				s.Stats.PreviewEOF.Add(1)
			} else if !s.DecidePreview && (s.Block == "" || !bytes.Contains(body, []byte(s.Block))) {
				// Not decided on the preview: the rest, please.
				// (DecidePreview judges the preview as it is.)
				s.Stats.Continues.Add(1)
				if _, err := c.Write([]byte("ICAP/1.0 100 Continue\r\n\r\n")); err != nil {
					return err
				}
				more, _, err := icap.ReadChunked(r, 64<<20)
				if err != nil {
					return err
				}
				body = append(body, more...)
			}
		}
	}
	if s.Block != "" && bytes.Contains(body, []byte(s.Block)) {
		s.Stats.Blocked.Add(1)
		s.log(method + " blocked")
		page := "HTTP/1.1 403 Forbidden\r\nContent-Type: text/html\r\nContent-Length: " + strconv.Itoa(len(blockPage)) + "\r\n\r\n"
		return write(c, "", page, blockPage, s.istag(), s.answer())
	}
	head := reqHead
	if method == "RESPMOD" {
		head = resHead
	}
	nh, changed := s.rewrite(head)
	decided := hdr["preview"] != "" && s.DecidePreview
	if !changed && !decided && !s.Always204 && !strings.Contains(hdr["allow"], "204") {
		// A client that cannot take a 204 (it holds no copy of the
		// message) gets the message back whole, as RFC 3507 has it.
		s.Stats.Echoed.Add(1)
		s.log(method + " echoed")
		if method == "RESPMOD" {
			return write(c, "", string(head), string(body), s.istag(), s.answer())
		}
		return write(c, string(head), "", string(body), s.istag(), s.answer())
	}
	if !changed {
		s.Stats.NoContent.Add(1)
		s.log(method + " 204")
		_, err := c.Write([]byte("ICAP/1.0 204 No Content\r\nISTag: \"" + s.istag() + "\"\r\n" + s.answer() + "Encapsulated: null-body=0\r\n\r\n"))
		return err
	}
	s.Stats.Modified.Add(1)
	s.log(method + " modified")
	if method == "RESPMOD" {
		return write(c, "", string(nh), string(body), s.istag(), s.answer())
	}
	return write(c, string(nh), "", string(body), s.istag(), s.answer())
}

// rewrite applies Header/Value and Add to a head.
func (s *Server) rewrite(head []byte) ([]byte, bool) {
	if s.Header == "" {
		return head, false
	}
	lines := strings.Split(strings.TrimSuffix(string(head), "\r\n\r\n"), "\r\n")
	found := false
	for i, l := range lines[1:] {
		k, _, ok := strings.Cut(l, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), s.Header) {
			lines[i+1] = s.Header + ": " + s.Value
			found = true
		}
	}
	if !found {
		return head, false
	}
	if s.Add != "" {
		lines = append(lines, s.Add)
	}
	return []byte(strings.Join(lines, "\r\n") + "\r\n\r\n"), true
}

// write sends a 200 with an encapsulated request head or response head,
// and body (chunked), one of the heads empty.
func write(c net.Conn, reqHead, resHead, body, istag, answer string) error {
	enc := "req-hdr=0, req-body=" + strconv.Itoa(len(reqHead))
	if resHead != "" {
		enc = "res-hdr=0, res-body=" + strconv.Itoa(len(resHead))
	}
	var b strings.Builder
	b.WriteString("ICAP/1.0 200 OK\r\nISTag: \"" + istag + "\"\r\n" + answer + "Encapsulated: " + enc + "\r\n\r\n")
	b.WriteString(reqHead + resHead)
	if body != "" {
		b.WriteString(strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n")
	}
	b.WriteString("0\r\n\r\n")
	_, err := c.Write([]byte(b.String()))
	return err
}

func ioReadFull(r *bufio.Reader, p []byte) (int, error) { return io.ReadFull(r, p) }

func (s *Server) istag() string {
	if s.ISTag != "" {
		return s.ISTag
	}
	return "openltm-test"
}

// answer is Answer as a field line, "" when none.
func (s *Server) answer() string {
	if s.Answer == "" {
		return ""
	}
	return s.Answer + "\r\n"
}

func (s *Server) log(line string) {
	if s.Log != nil {
		s.Log(line)
	}
}
