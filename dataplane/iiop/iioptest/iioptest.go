// Package iioptest is a small GIOP server for tests and cmd/tcpkit: it
// answers every Request that expects a reply with a Reply whose body is
// its own name, and every LocateRequest with OBJECT_HERE, so a client
// sees which member served each request.
//
// A request's operation steers the answer: "delay:N" answers after N
// milliseconds (in its own goroutine, so later requests may be answered
// first: replies out of order), "noreply" never answers, "close" closes
// the connection without an answer (once the delayed replies are out),
// "closeonce:NAME" (or "closeonce:NAME:TAG") sends CloseConnection and
// closes the connection at once, its delayed replies unsent (GIOP: what
// is unanswered was not processed), when the server is NAME and sees
// that operation for the first time; it is answered as any other
// request otherwise; "say:TEXT" is answered with the body NAME/TEXT (so
// that clients sharing a connection tell their replies apart). Fragmented
// requests (GIOP 1.1 and 1.2) are joined before they are answered; a 1.2
// Fragment whose request id is not its message's is answered with
// MessageError and the connection closed. CancelRequests are told to
// seen too, and a joined request's line says in how many fragments it
// came.
package iioptest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
)

// ReadMessage reads one whole GIOP message from r.
func ReadMessage(r io.Reader) ([]byte, error) {
	hdr := make([]byte, iiop.HeaderSize)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, err
	}
	h, err := iiop.ParseHeader(hdr)
	if err != nil {
		return nil, err
	}
	if h.Size > 16<<20 {
		return nil, errors.New("iioptest: message over 16 MiB")
	}
	b := make([]byte, iiop.HeaderSize+int(h.Size))
	copy(b, hdr)
	_, err = io.ReadFull(r, b[iiop.HeaderSize:])
	return b, err
}

// Server answers GIOP on a listener.
type Server struct {
	Name string
	ln   net.Listener
	wg   sync.WaitGroup
	// Requests counts the requests (whole, fragments joined) served.
	Requests atomic.Int64
	mu       sync.Mutex
	keys     map[string]int
	conns    map[net.Conn]bool
	seen     func(line string)
	closedOn map[string]bool // the "closeonce" operations seen
}

// Listen starts a server named name on addr (host:port).
func Listen(addr, name string) (*Server, error) {
	return ListenSeen(addr, name, nil)
}

// ListenSeen is Listen with seen told of every request served, as a line
// (type, request id, object key, operation).
func ListenSeen(addr, name string, seen func(line string)) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{Name: name, ln: ln, keys: map[string]int{}, conns: map[net.Conn]bool{}, seen: seen}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[c] = true
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.Serve(c)
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
			}()
		}
	}()
	return s, nil
}

// Addr is where the server listens.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Keys returns how many requests each object key brought.
func (s *Server) Keys() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.keys))
	for k, v := range s.keys {
		out[k] = v
	}
	return out
}

// Close stops the server and ends its connections.
func (s *Server) Close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Serve answers one connection until it ends.
func (s *Server) Serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	var wmu sync.Mutex
	var wg sync.WaitGroup
	defer wg.Wait()
	write := func(b []byte) {
		wmu.Lock()
		c.Write(b)
		wmu.Unlock()
	}
	var whole []byte // a fragmented request being joined
	var wholeID uint32
	parts := 0 // the fragments of the request being joined
	for {
		b, err := ReadMessage(r)
		if err != nil {
			return
		}
		m, err := iiop.Parse(b)
		if err != nil {
			write(iiop.AppendHeaderOnly(nil, 0, false, iiop.MessageError))
			return
		}
		switch m.Type {
		case iiop.Fragment:
			if whole == nil {
				continue
			}
			part := b[iiop.HeaderSize:]
			if m.Minor >= 2 {
				if m.RequestID != wholeID {
					write(iiop.AppendHeaderOnly(nil, m.Minor, m.Little(), iiop.MessageError))
					return
				}
				part = part[4:]
			}
			whole = append(whole, part...)
			parts++
			if m.More() {
				continue
			}
			o := binary.ByteOrder(binary.BigEndian)
			if whole[6]&iiop.FlagLittleEndian != 0 {
				o = binary.LittleEndian
			}
			whole[6] &^= iiop.FlagMoreFragments
			o.PutUint32(whole[8:], uint32(len(whole)-iiop.HeaderSize))
			b, whole = whole, nil
			if m, err = iiop.Parse(b); err != nil {
				return
			}
		case iiop.Request:
			if m.More() {
				whole, wholeID, parts = append([]byte(nil), b...), m.RequestID, 1
				continue
			}
		case iiop.LocateRequest:
			s.count(m.Key)
			if s.seen != nil {
				s.seen(fmt.Sprintf("%s: LocateRequest id %d key %s", s.Name, m.RequestID, m.Key))
			}
			write(iiop.AppendLocateReply(nil, m.Minor, m.Little(), m.RequestID, 1))
			continue
		case iiop.CancelRequest:
			if s.seen != nil {
				s.seen(fmt.Sprintf("%s: CancelRequest id %d", s.Name, m.RequestID))
			}
			continue
		default:
			continue
		}
		s.count(m.Key)
		joined := parts
		parts = 0
		op := iiop.RequestOperation(b)
		if s.seen != nil {
			line := fmt.Sprintf("%s: Request id %d key %s op %s", s.Name, m.RequestID, m.Key, op)
			if joined > 0 {
				line += fmt.Sprintf(" (in %d fragments)", joined)
			}
			s.seen(line)
		}
		if !m.Expects {
			continue
		}
		switch op {
		case "noreply":
			continue
		case "close":
			return
		}
		if s.closeOnce(op) {
			write(iiop.AppendHeaderOnly(nil, m.Minor, m.Little(), iiop.CloseConnection))
			c.Close()
			return
		}
		body := s.Name
		if text, ok := strings.CutPrefix(op, "say:"); ok {
			body += "/" + text
		}
		reply := iiop.AppendReply(nil, m.Minor, m.Little(), m.RequestID, 0, []byte(body))
		if d, ok := strings.CutPrefix(op, "delay:"); ok {
			ms, _ := strconv.Atoi(d)
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(ms) * time.Millisecond)
				write(reply)
			}()
			continue
		}
		write(reply)
	}
}

func (s *Server) count(key []byte) {
	s.Requests.Add(1)
	s.mu.Lock()
	s.keys[string(key)]++
	s.mu.Unlock()
}

// closeOnce reports whether op is "closeonce:" this server's name (and
// a tag) seen for the first time.
func (s *Server) closeOnce(op string) bool {
	rest, ok := strings.CutPrefix(op, "closeonce:")
	if !ok {
		return false
	}
	if name, _, _ := strings.Cut(rest, ":"); name != s.Name {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closedOn[op] {
		return false
	}
	if s.closedOn == nil {
		s.closedOn = map[string]bool{}
	}
	s.closedOn[op] = true
	return true
}
