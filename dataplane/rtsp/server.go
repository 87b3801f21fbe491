package rtsp

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a small RTSP member for tests and tools (tcpkit
// rtsp-server): it answers OPTIONS, DESCRIBE, SETUP, PLAY and TEARDOWN,
// and once PLAY comes sends RTP packets to the client's client_port from
// its server_port (UDP), or as interleaved frames on the control
// connection, until TEARDOWN. Each packet's payload is the server's
// name, so that a client knows which member sent it.
type Server struct {
	Name string
	// Interval and Count pace and bound the packets of one PLAY.
	Interval time.Duration
	Count    int

	ln *net.TCPListener
	// log, when set (ListenLog), hears each request's method and the
	// address it came from, and a SETUP's Transport.
	log  func(string)
	mu   sync.Mutex
	reqs []Message
	sess map[string]*serverSession
	seq  atomic.Uint32
	wg   sync.WaitGroup
}

type serverSession struct {
	id      string
	udp     []*net.UDPConn
	dst     []netip.AddrPort
	conn    net.Conn // interleaved: the connection of the SETUP
	channel byte
	stop    chan struct{}
	once    sync.Once
}

func (s *serverSession) end() {
	s.once.Do(func() {
		close(s.stop)
		closeAll(s.udp)
	})
}

// Listen starts a server on addr ("ip:port").
func Listen(addr, name string) (*Server, error) { return ListenLog(addr, name, nil) }

// ListenLog is Listen with log hearing each request's method and the
// address its connection came from (and a SETUP's Transport, where the
// server sends its RTP), so that a test sees what the member saw.
func ListenLog(addr, name string, log func(string)) (*Server, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(ap))
	if err != nil {
		return nil, err
	}
	s := &Server{Name: name, Interval: 20 * time.Millisecond, Count: 1000, ln: ln, log: log, sess: map[string]*serverSession{}}
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// Addr is the server's address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Requests is the requests the server got so far, as it got them.
func (s *Server) Requests() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.reqs...)
}

// Sessions is how many sessions are set up and not torn down.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sess)
}

// Close stops the server and its sessions.
func (s *Server) Close() {
	s.ln.Close()
	s.mu.Lock()
	for _, ss := range s.sess {
		ss.end()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.conn(c)
	}
}

func (s *Server) conn(c net.Conn) {
	defer c.Close()
	rd := NewReader(c, 64<<10, 1<<20)
	var wmu sync.Mutex
	write := func(b []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		_, err := c.Write(b)
		return err
	}
	var m Message
	for {
		frame, err := rd.Next(&m)
		if err != nil {
			return
		}
		if frame != nil {
			continue // the client's RTCP, interleaved
		}
		s.mu.Lock()
		cp := m
		cp.Fields = append([]Field(nil), m.Fields...)
		s.reqs = append(s.reqs, cp)
		s.mu.Unlock()
		if s.log != nil {
			line := m.Method + " from " + c.RemoteAddr().String()
			if tv, ok := m.Get("Transport"); ok && m.Method == "SETUP" {
				line += " Transport: " + tv
			}
			s.log(line)
		}
		resp := s.answer(&m, c, write)
		if err := write(resp.Encode(nil)); err != nil {
			return
		}
	}
}

// answer is the response to req.
func (s *Server) answer(req *Message, c net.Conn, write func([]byte) error) *Message {
	r := &Message{Version: "RTSP/1.0", Status: 200, Reason: "OK"}
	if v, ok := req.Get("CSeq"); ok {
		r.Add("CSeq", v)
	}
	r.Add("Server", "openltm-rtsp-test/"+s.Name)
	switch req.Method {
	case "OPTIONS":
		r.Add("Public", "OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN")
	case "DESCRIBE":
		r.Add("Content-Type", "application/sdp")
		r.Add("Content-Base", req.URI+"/")
		r.Body = []byte("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=" + s.Name + "\r\nt=0 0\r\nm=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=control:track1\r\n")
	case "SETUP":
		return s.setup(req, r, c)
	case "PLAY":
		ss := s.session(req)
		if ss == nil {
			return status(r, 454, "Session Not Found")
		}
		r.Add("Session", ss.id)
		r.Add("RTP-Info", "url="+req.URI+";seq=1;rtptime=0")
		go s.play(ss, write)
	case "TEARDOWN":
		ss := s.session(req)
		if ss == nil {
			return status(r, 454, "Session Not Found")
		}
		s.mu.Lock()
		delete(s.sess, ss.id)
		s.mu.Unlock()
		ss.end()
	default:
		return status(r, 501, "Not Implemented")
	}
	return r
}

func status(r *Message, code int, reason string) *Message {
	r.Status, r.Reason = code, reason
	return r
}

func (s *Server) session(req *Message) *serverSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess[req.Session()]
}

func (s *Server) setup(req, r *Message, c net.Conn) *Message {
	tv, _ := req.Get("Transport")
	specs := ParseTransport(tv)
	if len(specs) == 0 {
		return status(r, 461, "Unsupported Transport")
	}
	sp := specs[0]
	ss := &serverSession{id: fmt.Sprintf("%08X", 0x5e551000+s.seq.Add(1)), stop: make(chan struct{})}
	local := AddrOf(c.LocalAddr())
	peer := AddrOf(c.RemoteAddr())
	if sp.UDP() {
		cv, _ := sp.Get("client_port")
		cp, ok := ParsePorts(cv)
		if !ok {
			return status(r, 461, "Unsupported Transport")
		}
		us, err := ListenPair(local.Addr(), AnyPorts(cp.Count()))
		if err != nil {
			return status(r, 500, "Internal Server Error")
		}
		ss.udp = us
		for i := range us {
			ss.dst = append(ss.dst, netip.AddrPortFrom(peer.Addr(), cp.Port(i)))
		}
		sp.Set("server_port", LocalPorts(us).String())
		sp.Set("source", local.Addr().String())
	} else {
		ss.conn = c
		if iv, ok := sp.Get("interleaved"); ok {
			if p, ok := ParsePorts(iv); ok || iv == "0-1" {
				ss.channel = byte(p.First)
			}
		} else {
			sp.Set("interleaved", "0-1")
		}
	}
	s.mu.Lock()
	s.sess[ss.id] = ss
	s.mu.Unlock()
	r.Add("Transport", FormatTransport([]Spec{sp}))
	r.Add("Session", ss.id+";timeout=60")
	return r
}

// play sends the session's RTP packets until TEARDOWN or Count.
func (s *Server) play(ss *serverSession, write func([]byte) error) {
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	pkt := make([]byte, 12, 12+len(s.Name)+4)
	for i := range s.Count {
		select {
		case <-ss.stop:
			return
		case <-t.C:
		}
		pkt = RTPPacket(pkt[:0], uint16(i), uint32(i*3000), 0x0ab1e000, []byte(s.Name))
		if ss.conn != nil {
			frame := append([]byte{'$', ss.channel, 0, 0}, pkt...)
			binary.BigEndian.PutUint16(frame[2:], uint16(len(pkt)))
			if write(frame) != nil {
				return
			}
			continue
		}
		ss.udp[0].WriteToUDPAddrPort(pkt, ss.dst[0])
	}
}

// RTPPacket appends an RTP packet (RFC 3550 5.1: version 2, payload
// type 96, no CSRC) carrying payload.
func RTPPacket(dst []byte, seq uint16, ts, ssrc uint32, payload []byte) []byte {
	dst = append(dst, 0x80, 96)
	dst = binary.BigEndian.AppendUint16(dst, seq)
	dst = binary.BigEndian.AppendUint32(dst, ts)
	dst = binary.BigEndian.AppendUint32(dst, ssrc)
	return append(dst, payload...)
}

// RTPPayload is an RTP packet's payload (after its 12-byte header and
// CSRCs); nil when p is not one.
func RTPPayload(p []byte) []byte {
	if len(p) < 12 || p[0]>>6 != 2 {
		return nil
	}
	h := 12 + 4*int(p[0]&0x0f)
	if len(p) < h {
		return nil
	}
	return p[h:]
}
