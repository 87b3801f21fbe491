// Package gslbtest emulates the peers of a GSLB DNS server in tests and
// demos: an LDNS (a local DNS server) that asks a GSLB for names from its
// own address, and answers the GSLB's RTT probes after a delay that
// depends on which address the probe comes from, so each datacenter's
// (or link's) path to it can be made slower or faster on one loopback.
package gslbtest

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// LDNS is an emulated local DNS server bound to one address.
type LDNS struct {
	addr netip.Addr
	port uint16
	udp  *net.UDPConn
	tcp  net.Listener

	mu     sync.Mutex
	delays map[netip.Addr]time.Duration
	def    time.Duration
	probes map[netip.Addr]int
	closed bool
	wg     sync.WaitGroup
}

// NewLDNS binds UDP and TCP on addr:port (port 0 picks one free for both)
// and answers probes: any query gets a REFUSED after the delay set for
// the probe's source address (SetDelay), or the default delay.
func NewLDNS(addr netip.Addr, port uint16) (*LDNS, error) {
	l := &LDNS{addr: addr, delays: map[netip.Addr]time.Duration{}, probes: map[netip.Addr]int{}}
	var err error
	for try := 0; try < 20; try++ {
		l.udp, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, port)))
		if err != nil {
			return nil, err
		}
		p := uint16(l.udp.LocalAddr().(*net.UDPAddr).Port)
		l.tcp, err = net.Listen("tcp", netip.AddrPortFrom(addr, p).String())
		if err == nil {
			l.port = p
			break
		}
		l.udp.Close()
		if port != 0 {
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	l.wg.Add(2)
	go l.serveUDP()
	go l.serveTCP()
	return l, nil
}

// Addr is the LDNS's address, Port the port its probes are answered on.
func (l *LDNS) Addr() netip.Addr { return l.addr }

// Port is where the LDNS answers probes (UDP and TCP).
func (l *LDNS) Port() uint16 { return l.port }

// SetDelay makes probes from src wait d before their answer: the RTT the
// GSLB measures over that path.
func (l *LDNS) SetDelay(src netip.Addr, d time.Duration) {
	l.mu.Lock()
	l.delays[src] = d
	l.mu.Unlock()
}

// SetDefaultDelay is the delay for sources without their own.
func (l *LDNS) SetDefaultDelay(d time.Duration) {
	l.mu.Lock()
	l.def = d
	l.mu.Unlock()
}

// Probes is how many probes came from src.
func (l *LDNS) Probes(src netip.Addr) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.probes[src]
}

func (l *LDNS) delayFor(src netip.Addr) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.probes[src]++
	if d, ok := l.delays[src]; ok {
		return d
	}
	return l.def
}

func refusal(buf []byte) []byte {
	var q dns.Msg
	if err := q.Unpack(buf); err != nil {
		return nil
	}
	m := new(dns.Msg)
	m.SetRcode(&q, dns.RcodeRefused)
	out, err := m.Pack()
	if err != nil {
		return nil
	}
	return out
}

func (l *LDNS) serveUDP() {
	defer l.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, from, err := l.udp.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		resp := refusal(buf[:n])
		if resp == nil {
			continue
		}
		d := l.delayFor(from.Addr().Unmap())
		l.wg.Add(1)
		time.AfterFunc(d, func() {
			defer l.wg.Done()
			l.udp.WriteToUDPAddrPort(resp, from)
		})
	}
}

func (l *LDNS) serveTCP() {
	defer l.wg.Done()
	for {
		c, err := l.tcp.Accept()
		if err != nil {
			return
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer c.Close()
			src := c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			dc := &dns.Conn{Conn: c}
			for {
				q, err := dc.ReadMsg()
				if err != nil {
					return
				}
				time.Sleep(l.delayFor(src))
				m := new(dns.Msg)
				m.SetRcode(q, dns.RcodeRefused)
				if dc.WriteMsg(m) != nil {
					return
				}
			}
		}()
	}
}

// Close stops answering and waits for answers in flight.
func (l *LDNS) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	l.tcp.Close()
	l.udp.Close()
	l.wg.Wait()
	return nil
}

// Query asks server for name/qtype over UDP from the LDNS's address (a
// fresh source port, as resolvers randomise them), with a timeout.
func (l *LDNS) Query(server netip.AddrPort, name string, qtype uint16) (*dns.Msg, error) {
	return Query(l.addr, server, "udp", name, qtype, 2*time.Second)
}

// QueryTCP is Query over TCP.
func (l *LDNS) QueryTCP(server netip.AddrPort, name string, qtype uint16) (*dns.Msg, error) {
	return Query(l.addr, server, "tcp", name, qtype, 2*time.Second)
}

// Query sends one question from src (any port) to server over network
// ("udp" or "tcp") and returns the reply.
func Query(src netip.Addr, server netip.AddrPort, network, name string, qtype uint16, timeout time.Duration) (*dns.Msg, error) {
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), qtype)
	q.RecursionDesired = false
	return Exchange(src, server, network, q, timeout)
}

// Exchange sends q from src to server and returns the reply.
func Exchange(src netip.Addr, server netip.AddrPort, network string, q *dns.Msg, timeout time.Duration) (*dns.Msg, error) {
	d := &net.Dialer{Timeout: timeout}
	switch network {
	case "udp":
		if src.IsValid() {
			d.LocalAddr = net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0))
		}
	case "tcp":
		if src.IsValid() {
			d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(src, 0))
		}
	default:
		return nil, fmt.Errorf("network %q is not udp or tcp", network)
	}
	c := &dns.Client{Net: network, Dialer: d, Timeout: timeout}
	r, _, err := c.Exchange(q, server.String())
	if err != nil {
		return nil, err
	}
	if r.Id != q.Id {
		return nil, errors.New("reply id mismatch")
	}
	return r, nil
}

// Addrs lists the A/AAAA addresses of a reply's answer section.
func Addrs(m *dns.Msg) []netip.Addr {
	var out []netip.Addr
	for _, rr := range m.Answer {
		switch x := rr.(type) {
		case *dns.A:
			if a, ok := netip.AddrFromSlice(x.A); ok {
				out = append(out, a.Unmap())
			}
		case *dns.AAAA:
			if a, ok := netip.AddrFromSlice(x.AAAA); ok {
				out = append(out, a)
			}
		}
	}
	return out
}
