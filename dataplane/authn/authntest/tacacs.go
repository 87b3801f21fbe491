package authntest

import (
	"crypto/md5"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// TACACS is a TACACS+ server written from RFC 8907, apart from the
// client it tests: a PAP login START of alice/wonder or erin/erinpw
// passes, any other fails; an authorization REQUEST passes for alice
// (adding priv-lvl=15) and fails for erin, whatever its service.
type TACACS struct {
	ln     net.Listener
	secret []byte
	wg     sync.WaitGroup
	// Starts counts the authentication STARTs answered; Services the
	// last authorization's service argument.
	Starts   atomic.Int64
	Services atomic.Value
}

// StartTACACS serves on addr (host:port, TCP) with secret.
func StartTACACS(addr, secret string) (*TACACS, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &TACACS{ln: ln, secret: []byte(secret)}
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

func (s *TACACS) serve(c net.Conn) {
	hdr := make([]byte, 12)
	if _, err := io.ReadFull(c, hdr); err != nil || hdr[0]>>4 != 0xc || hdr[2] != 1 {
		return
	}
	n := binary.BigEndian.Uint32(hdr[8:])
	if n > 4096 {
		return
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c, body); err != nil {
		return
	}
	s.xor(hdr, body)
	var reply []byte
	switch hdr[1] {
	case 1: // authentication START: action priv type service ulen plen rlen dlen
		if len(body) < 8 || body[2] != 2 || 8+int(body[4])+int(body[5])+int(body[6])+int(body[7]) > len(body) {
			reply = []byte{7, 0, 0, 0, 0, 0} // ERROR
			break
		}
		s.Starts.Add(1)
		u := string(body[8 : 8+int(body[4])])
		d := 8 + int(body[4]) + int(body[5]) + int(body[6])
		p := string(body[d : d+int(body[7])])
		status := byte(2) // FAIL
		if u == "alice" && p == "wonder" || u == "erin" && p == "erinpw" {
			status = 1 // PASS
		}
		reply = []byte{status, 0, 0, 0, 0, 0}
	case 2: // authorization REQUEST: method priv type service ulen plen rlen argc argl...
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
			reply = append([]byte{1, 1, 0, 0, 0, 0, byte(len(arg))}, arg...)
		} else {
			reply = []byte{0x10, 0, 0, 0, 0, 0}
		}
	default:
		return
	}
	out := append([]byte{}, hdr...)
	out[2] = 2
	binary.BigEndian.PutUint32(out[8:], uint32(len(reply)))
	s.xor(out, reply)
	c.Write(append(out, reply...))
}

// Addr is the address it listens on.
func (s *TACACS) Addr() string { return s.ln.Addr().String() }
