package authntest

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// TACACS is a TACACS+ server written from RFC 8907, apart from the
// client it tests: a login of alice/wonder or erin/erinpw passes, any
// other fails; an authorization REQUEST passes for alice (adding
// priv-lvl=15) and fails for erin, whatever its service; an accounting
// REQUEST is recorded (Records) and answered SUCCESS. It takes the
// login types of its options (PAP alone by default) and answers a START
// of another type RESTART, listing its own.
type TACACS struct {
	ln     net.Listener
	secret []byte
	types  []byte
	wg     sync.WaitGroup
	// Starts counts the authentication STARTs answered; Services the
	// last authorization's service argument.
	Starts   atomic.Int64
	Services atomic.Value
	mu       sync.Mutex
	records  []string
	logins   []string
}

// TACACS+ login types, for TACACSOptions.
const (
	TACACSASCII = 1
	TACACSPAP   = 2
	TACACSCHAP  = 3
)

// TACACSOptions are a test server's choices: the login types it takes
// (TACACSPAP, TACACSASCII, TACACSCHAP; PAP alone when empty).
type TACACSOptions struct {
	Types []byte
}

// StartTACACS serves on addr (host:port, TCP) with secret, taking PAP
// logins.
func StartTACACS(addr, secret string) (*TACACS, error) {
	return StartTACACSWith(addr, secret, TACACSOptions{})
}

// StartTACACSWith serves on addr with secret and the options.
func StartTACACSWith(addr, secret string, o TACACSOptions) (*TACACS, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &TACACS{ln: ln, secret: []byte(secret), types: o.Types}
	if len(s.types) == 0 {
		s.types = []byte{TACACSPAP}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(30 * time.Second))
				s.serve(c)
			}()
		}
	}()
	return s, nil
}

// Close stops the server.
func (s *TACACS) Close() {
	s.ln.Close()
	s.wg.Wait()
}

// Records are the accounting records received, in order, each as
// "start USER PORT REMOTE arg arg..." (or stop).
func (s *TACACS) Records() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.records...)
}

// Logins are the logins that passed, each as "USER TYPE" (pap, ascii,
// chap).
func (s *TACACS) Logins() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.logins...)
}

// xor applies RFC 8907's pad (section 4.5) to body.
func (s *TACACS) xor(hdr []byte, body []byte) {
	if hdr[3]&0x01 != 0 {
		return
	}
	var prev []byte
	for i := 0; i < len(body); i += 16 {
		in := append(append(append([]byte{}, hdr[4:8]...), s.secret...), hdr[0], hdr[2])
		in = append(in, prev...)
		sum := md5.Sum(in)
		prev = sum[:]
		for j := 0; j < 16 && i+j < len(body); j++ {
			body[i+j] ^= sum[j]
		}
	}
}

// read reads one packet: its header and clear body.
func (s *TACACS) read(c net.Conn) ([]byte, []byte, bool) {
	hdr := make([]byte, 12)
	if _, err := io.ReadFull(c, hdr); err != nil || hdr[0]>>4 != 0xc {
		return nil, nil, false
	}
	n := binary.BigEndian.Uint32(hdr[8:])
	if n > 4096 {
		return nil, nil, false
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c, body); err != nil {
		return nil, nil, false
	}
	s.xor(hdr, body)
	return hdr, body, true
}

// write answers the packet of header hdr with body.
func (s *TACACS) write(c net.Conn, hdr, body []byte) {
	out := append([]byte{}, hdr...)
	out[2] = hdr[2] + 1
	binary.BigEndian.PutUint32(out[8:], uint32(len(body)))
	s.xor(out, body)
	c.Write(append(out, body...))
}

// authenReply is an authentication REPLY's body.
func authenReply(status byte, data []byte) []byte {
	return append([]byte{status, 0, 0, 0, byte(len(data) >> 8), byte(len(data))}, data...)
}

func (s *TACACS) takes(t byte) bool {
	for _, x := range s.types {
		if x == t {
			return true
		}
	}
	return false
}

func (s *TACACS) serve(c net.Conn) {
	hdr, body, ok := s.read(c)
	if !ok || hdr[2] != 1 {
		return
	}
	switch hdr[1] {
	case 1:
		s.login(c, hdr, body)
	case 2:
		s.authorize(c, hdr, body)
	case 3:
		s.account(c, hdr, body)
	}
}

func good(u, p string) bool { return u == "alice" && p == "wonder" || u == "erin" && p == "erinpw" }

var passwords = map[string]string{"alice": "wonder", "erin": "erinpw"}

// login answers an authentication START: action priv type service ulen
// plen rlen dlen user port rem data.
func (s *TACACS) login(c net.Conn, hdr, body []byte) {
	if len(body) < 8 || 8+int(body[4])+int(body[5])+int(body[6])+int(body[7]) > len(body) {
		s.write(c, hdr, authenReply(7, nil)) // ERROR
		return
	}
	s.Starts.Add(1)
	typ := body[2]
	u := string(body[8 : 8+int(body[4])])
	d := 8 + int(body[4]) + int(body[5]) + int(body[6])
	data := body[d : d+int(body[7])]
	if !s.takes(typ) {
		s.write(c, hdr, authenReply(6, s.types)) // RESTART, with the types it takes
		return
	}
	wantMinor := byte(1)
	if typ == TACACSASCII {
		wantMinor = 0
	}
	if hdr[0]&0x0f != wantMinor {
		s.write(c, hdr, authenReply(7, nil))
		return
	}
	pass := false
	switch typ {
	case TACACSPAP:
		pass = good(u, string(data))
	case TACACSCHAP:
		// id, challenge, then MD5(id, password, challenge).
		if len(data) > 17 {
			id, ch, resp := data[:1], data[1:len(data)-16], data[len(data)-16:]
			pw, ok := passwords[u]
			h := md5.New()
			h.Write(id)
			h.Write([]byte(pw))
			h.Write(ch)
			pass = ok && string(h.Sum(nil)) == string(resp)
		}
	case TACACSASCII:
		// GETUSER unless the START named the user, then GETPASS.
		for u == "" || !pass {
			status := byte(5)
			if u == "" {
				status = 4
			}
			s.write(c, hdr, authenReply(status, nil))
			var ok bool
			hdr, body, ok = s.read(c)
			if !ok || hdr[1] != 1 || len(body) < 5 || body[4]&1 != 0 {
				return
			}
			msg := string(body[5 : 5+min(int(binary.BigEndian.Uint16(body)), len(body)-5)])
			if u == "" {
				u = msg
				continue
			}
			pass = good(u, msg)
			break
		}
	}
	status := byte(2)
	if pass {
		status = 1
		s.mu.Lock()
		s.logins = append(s.logins, fmt.Sprintf("%s %s", u, map[byte]string{1: "ascii", 2: "pap", 3: "chap"}[typ]))
		s.mu.Unlock()
	}
	s.write(c, hdr, authenReply(status, nil))
}

// authorize answers an authorization REQUEST: method priv type service
// ulen plen rlen argc argl... user port rem args.
func (s *TACACS) authorize(c net.Conn, hdr, body []byte) {
	if len(body) < 8 {
		return
	}
	argc := int(body[7])
	off := 8 + argc
	if off > len(body) {
		return
	}
	u := string(body[off : off+int(body[4])])
	off += int(body[4]) + int(body[5]) + int(body[6])
	for i := 0; i < argc && off+int(body[8+i]) <= len(body); i++ {
		a := string(body[off : off+int(body[8+i])])
		if len(a) > 8 && a[:8] == "service=" {
			s.Services.Store(a[8:])
		}
		off += int(body[8+i])
	}
	if u == "alice" {
		arg := "priv-lvl=15"
		s.write(c, hdr, append([]byte{1, 1, 0, 0, 0, 0, byte(len(arg))}, arg...))
	} else {
		s.write(c, hdr, []byte{0x10, 0, 0, 0, 0, 0})
	}
}

// account records an accounting REQUEST: flags method priv type service
// ulen plen rlen argc argl... user port rem args.
func (s *TACACS) account(c net.Conn, hdr, body []byte) {
	if len(body) < 9 {
		return
	}
	argc := int(body[8])
	off := 9 + argc
	if off > len(body) {
		return
	}
	var f []string
	switch {
	case body[0]&0x02 != 0:
		f = append(f, "start")
	case body[0]&0x04 != 0:
		f = append(f, "stop")
	default:
		f = append(f, "watchdog")
	}
	for _, l := range body[5:8] {
		if off+int(l) > len(body) {
			return
		}
		f = append(f, string(body[off:off+int(l)]))
		off += int(l)
	}
	for i := 0; i < argc && off+int(body[9+i]) <= len(body); i++ {
		f = append(f, string(body[off:off+int(body[9+i])]))
		off += int(body[9+i])
	}
	s.mu.Lock()
	s.records = append(s.records, strings.Join(f, " "))
	s.mu.Unlock()
	s.write(c, hdr, []byte{0, 0, 0, 0, 1}) // SUCCESS
}

// Addr is the address it listens on.
func (s *TACACS) Addr() string { return s.ln.Addr().String() }
