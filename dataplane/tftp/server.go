package tftp

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Server is a TFTP server (RFC 1350 with the blksize and tsize options)
// that answers every transfer from a new port of its own, as tftp-hpa
// and every real server do: what members of a tftp virtual look like to
// tests and tcpkit, without an outside daemon.
type Server struct {
	// Dir holds the files read (RRQ) and written (WRQ); a name with a
	// directory in it is refused (access violation).
	Dir string
	// Timeout is how long a block waits for its answer before it is sent
	// again; Retries how often. Zero: 1 second, 5 times.
	Timeout time.Duration
	Retries int
	// Log, when set, hears each transfer's request and end.
	Log func(string)
}

// Serve reads requests on c (port 69) until it is closed; each transfer
// runs on its own socket from c's address.
func (s *Server) Serve(c *net.UDPConn) error {
	buf := make([]byte, 65536)
	local := c.LocalAddr().(*net.UDPAddr).AddrPort().Addr()
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		p, err := Parse(buf[:n])
		if err != nil || (p.Op != RRQ && p.Op != WRQ) {
			continue
		}
		go s.transfer(local, from, p)
	}
}

// TFTP error codes (RFC 1350 §5).
const (
	ErrNotFound     = 1
	ErrAccess       = 2
	ErrIllegal      = 4
	ErrUnknownTID   = 5
	ErrExists       = 6
	ErrOptionRefuse = 8
)

func (s *Server) log(msg string) {
	if s.Log != nil {
		s.Log(msg)
	}
}

func (s *Server) transfer(local netip.Addr, client netip.AddrPort, req Packet) {
	c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(local, 0)), net.UDPAddrFromAddrPort(client))
	if err != nil {
		return
	}
	defer c.Close()
	t := &xfer{s: s, c: c, blk: 512, buf: make([]byte, 65536)}
	s.log(req.Op.String() + " " + req.Filename + " from " + client.String())
	name := req.Filename
	if strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		t.fail(ErrAccess, "Access violation")
		return
	}
	path := filepath.Join(s.Dir, name)
	var oack []Option
	if _, ok := req.Option("blksize"); ok {
		t.blk = req.BlockSize()
		oack = append(oack, Option{"blksize", strconv.Itoa(t.blk)})
	}
	if req.Op == RRQ {
		data, err := os.ReadFile(path)
		if err != nil {
			t.fail(ErrNotFound, "File not found")
			s.log("RRQ " + name + ": file not found")
			return
		}
		if _, ok := req.Option("tsize"); ok {
			oack = append(oack, Option{"tsize", strconv.Itoa(len(data))})
		}
		if len(oack) > 0 && !t.exchange(Append(nil, &Packet{Op: OACK, Options: oack}), ACK, 0) {
			return
		}
		if t.send(data) {
			s.log("RRQ " + name + ": sent " + strconv.Itoa(len(data)) + " bytes")
		}
		return
	}
	if _, err := os.Stat(path); err == nil {
		t.fail(ErrExists, "File already exists")
		return
	}
	first := Append(nil, &Packet{Op: ACK})
	if len(oack) > 0 {
		first = Append(nil, &Packet{Op: OACK, Options: oack})
	}
	data, ok := t.receive(first)
	if !ok {
		return
	}
	tmp := path + ".part"
	if os.WriteFile(tmp, data, 0o644) != nil || os.Rename(tmp, path) != nil {
		return
	}
	s.log("WRQ " + name + ": received " + strconv.Itoa(len(data)) + " bytes")
}

// xfer is one transfer's socket, connected to the client's port.
type xfer struct {
	s   *Server
	c   *net.UDPConn
	blk int
	buf []byte
}

func (t *xfer) timeout() time.Duration {
	if t.s.Timeout > 0 {
		return t.s.Timeout
	}
	return time.Second
}

func (t *xfer) retries() int {
	if t.s.Retries > 0 {
		return t.s.Retries
	}
	return 5
}

func (t *xfer) fail(code uint16, msg string) {
	t.c.Write(Append(nil, &Packet{Op: ERROR, ErrCode: code, ErrMsg: msg}))
}

// exchange sends out until the client answers with op and block, or
// gives up; an ERROR from the client ends the transfer. For WRQ the
// answer's DATA is left in t.got.
func (t *xfer) exchange(out []byte, op Opcode, block uint16) bool {
	_, ok := t.await(out, op, block)
	return ok
}

func (t *xfer) await(out []byte, op Opcode, block uint16) (Packet, bool) {
	for try := 0; try <= t.retries(); try++ {
		if _, err := t.c.Write(out); err != nil {
			return Packet{}, false
		}
		deadline := time.Now().Add(t.timeout())
		for {
			t.c.SetReadDeadline(deadline)
			n, err := t.c.Read(t.buf)
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					break // send again
				}
				if errors.Is(err, net.ErrClosed) {
					return Packet{}, false
				}
				continue // an ICMP error: wait on
			}
			p, err := Parse(t.buf[:n])
			if err != nil {
				continue
			}
			if p.Op == ERROR {
				return p, false
			}
			if p.Op == op && p.Block == block {
				return p, true
			}
		}
	}
	return Packet{}, false
}

// send sends data in blocks, block numbers wrapping past 65535.
func (t *xfer) send(data []byte) bool {
	var block uint16
	pkt := make([]byte, 0, 4+t.blk)
	for off := 0; ; off += t.blk {
		block++
		chunk := data[off:min(off+t.blk, len(data))]
		pkt = Append(pkt[:0], &Packet{Op: DATA, Block: block, Data: chunk})
		if !t.exchange(pkt, ACK, block) {
			return false
		}
		if len(chunk) < t.blk {
			return true
		}
	}
}

// receive answers the WRQ with first and takes the blocks until a short
// one, acknowledging each.
func (t *xfer) receive(first []byte) ([]byte, bool) {
	var data []byte
	out := first
	var block uint16
	for {
		block++
		p, ok := t.await(out, DATA, block)
		if !ok {
			return nil, false
		}
		data = append(data, p.Data...)
		out = Append(nil, &Packet{Op: ACK, Block: block})
		if len(p.Data) < t.blk {
			t.c.Write(out) // the last ACK; a lost one the client resends DATA for, unanswered [M]
			return data, true
		}
	}
}
