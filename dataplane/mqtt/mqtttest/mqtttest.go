// Package mqtttest is a small MQTT broker and client over real sockets,
// for the tests of the mqtt profile (dataplane tests, transcripts): a
// member whose behaviour the tests can see, and a client that sends
// exactly the packets a test means.
package mqtttest

import (
	"errors"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/mqtt"
)

// Broker is an MQTT 3.1.1/5.0 broker enough for tests: it accepts every
// CONNECT, grants subscriptions (QoS 0 and 1), acknowledges and
// delivers publishes to matching subscribers of its own clients (and
// retained ones to later subscribers), and answers pings. It records the client ids and user names it saw, so a
// test can tell which member served whom.
type Broker struct {
	// Name is put in the CONNACK-following PUBLISH on topic "$member"
	// sent to clients that subscribe to it.
	Name string
	ln   net.Listener

	mu    sync.Mutex
	ids   []string
	users []string
	subs  map[*brokerConn][]string
	conns map[net.Conn]bool
	// retained are the last retained publish of each topic, sent to
	// each new subscription that matches.
	retained map[string]*mqtt.Packet
	wg       sync.WaitGroup
}

type brokerConn struct {
	c       net.Conn
	version uint8
	wmu     sync.Mutex
}

// StartBroker listens on addr.
func StartBroker(addr, name string) (*Broker, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return Serve(ln, name), nil
}

// Serve runs a broker on ln, so that a test may give it a TLS listener
// (a member behind server-ssl).
func Serve(ln net.Listener, name string) *Broker {
	b := &Broker{Name: name, ln: ln, subs: map[*brokerConn][]string{}, conns: map[net.Conn]bool{}, retained: map[string]*mqtt.Packet{}}
	b.wg.Add(1)
	go b.accept()
	return b
}

// Addr is where the broker listens.
func (b *Broker) Addr() string { return b.ln.Addr().String() }

// Close stops the broker and its connections.
func (b *Broker) Close() {
	b.ln.Close()
	b.mu.Lock()
	for c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
}

// ClientIDs are the client ids of the CONNECTs the broker accepted, in
// order.
func (b *Broker) ClientIDs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.ids...)
}

// Users are the user names of those CONNECTs.
func (b *Broker) Users() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.users...)
}

func (b *Broker) accept() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		b.conns[c] = true
		b.mu.Unlock()
		b.wg.Add(1)
		go b.serve(c)
	}
}

func (b *Broker) serve(c net.Conn) {
	defer b.wg.Done()
	bc := &brokerConn{c: c}
	defer func() {
		c.Close()
		b.mu.Lock()
		delete(b.subs, bc)
		delete(b.conns, c)
		b.mu.Unlock()
	}()
	rd := mqtt.Reader{R: c}
	for {
		raw, err := rd.Next()
		if err != nil {
			return
		}
		p, err := mqtt.Decode(raw, bc.version)
		if err != nil {
			return
		}
		switch p.Type {
		case mqtt.CONNECT:
			bc.version = p.ProtocolVersion
			b.mu.Lock()
			b.ids = append(b.ids, p.ClientID)
			b.users = append(b.users, p.Username)
			b.mu.Unlock()
			bc.send(&mqtt.Packet{Type: mqtt.CONNACK})
		case mqtt.SUBSCRIBE:
			ack := &mqtt.Packet{Type: mqtt.SUBACK, PacketID: p.PacketID}
			var name bool
			for _, s := range p.Subscriptions {
				ack.ReturnCodes = append(ack.ReturnCodes, min(s.Options&3, 1))
				b.mu.Lock()
				b.subs[bc] = append(b.subs[bc], s.Topic)
				b.mu.Unlock()
				name = name || s.Topic == "$member"
			}
			bc.send(ack)
			if name {
				bc.send(&mqtt.Packet{Type: mqtt.PUBLISH, Topic: "$member", Payload: []byte(b.Name)})
			}
			for _, r := range b.retainedFor(p.Subscriptions) {
				bc.send(r)
			}
		case mqtt.UNSUBSCRIBE:
			bc.send(&mqtt.Packet{Type: mqtt.UNSUBACK, PacketID: p.PacketID})
		case mqtt.PUBLISH:
			switch p.QoS {
			case 1:
				bc.send(&mqtt.Packet{Type: mqtt.PUBACK, PacketID: p.PacketID})
			case 2:
				bc.send(&mqtt.Packet{Type: mqtt.PUBREC, PacketID: p.PacketID})
			}
			if p.Retain {
				b.mu.Lock()
				b.retained[p.Topic] = &mqtt.Packet{Type: mqtt.PUBLISH, Topic: p.Topic, Retain: true, Payload: append([]byte(nil), p.Payload...), Props: append([]byte(nil), p.Props...)}
				b.mu.Unlock()
			}
			b.deliver(p)
		case mqtt.PUBREL:
			bc.send(&mqtt.Packet{Type: mqtt.PUBCOMP, PacketID: p.PacketID})
		case mqtt.PINGREQ:
			bc.send(&mqtt.Packet{Type: mqtt.PINGRESP})
		case mqtt.DISCONNECT:
			return
		}
	}
}

// retainedFor is the retained publishes that match subs.
func (b *Broker) retainedFor(subs []mqtt.Subscription) []*mqtt.Packet {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*mqtt.Packet
	for topic, r := range b.retained {
		for _, s := range subs {
			if Match(s.Topic, topic) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// deliver sends p, at QoS 0, to the connections subscribed to its topic.
func (b *Broker) deliver(p *mqtt.Packet) {
	out := &mqtt.Packet{Type: mqtt.PUBLISH, Topic: p.Topic, Payload: p.Payload, Props: p.Props} // a 3.1.1 subscriber's encoding leaves the properties out
	b.mu.Lock()
	var to []*brokerConn
	for bc, filters := range b.subs {
		for _, f := range filters {
			if Match(f, p.Topic) {
				to = append(to, bc)
				break
			}
		}
	}
	b.mu.Unlock()
	for _, bc := range to {
		bc.send(out)
	}
}

func (bc *brokerConn) send(p *mqtt.Packet) {
	bc.wmu.Lock()
	defer bc.wmu.Unlock()
	bc.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	bc.c.Write(p.Encode(nil, bc.version))
}

// Match reports whether topic matches filter (+ one level, # the rest).
func Match(filter, topic string) bool {
	f, t := strings.Split(filter, "/"), strings.Split(topic, "/")
	for i, w := range f {
		if w == "#" {
			return true
		}
		if i >= len(t) || (w != "+" && w != t[i]) {
			return false
		}
	}
	return len(f) == len(t)
}

// Client is one MQTT client connection.
type Client struct {
	Conn    net.Conn
	Version uint8
	rd      mqtt.Reader
}

// Dial connects to addr and sends connect (its CONNACK is left for
// Recv, since a test may expect the connection to be refused).
func Dial(addr string, connect *mqtt.Packet) (*Client, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return Start(c, connect)
}

// Start sends connect over c, a connection the caller opened (a TLS one
// toward a virtual with client-ssl).
func Start(c net.Conn, connect *mqtt.Packet) (*Client, error) {
	cl := &Client{Conn: c, Version: connect.ProtocolVersion}
	cl.rd.R = c
	if err := cl.Send(connect); err != nil {
		c.Close()
		return nil, err
	}
	return cl, nil
}

// Connect is a CONNECT of MQTT 3.1.1 with the client id.
func Connect(id string) *mqtt.Packet {
	return &mqtt.Packet{Type: mqtt.CONNECT, ProtocolName: "MQTT", ProtocolVersion: mqtt.V311, CleanSession: true, KeepAlive: 60, ClientID: id}
}

// Send writes p.
func (cl *Client) Send(p *mqtt.Packet) error {
	cl.Conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := cl.Conn.Write(p.Encode(nil, cl.Version))
	return err
}

// Recv reads the next packet, waiting up to d.
func (cl *Client) Recv(d time.Duration) (*mqtt.Packet, error) {
	cl.Conn.SetReadDeadline(time.Now().Add(d))
	raw, err := cl.rd.Next()
	if err != nil {
		return nil, err
	}
	return mqtt.Decode(append([]byte(nil), raw...), cl.Version)
}

// Expect reads packets until one of type t (skipping others), up to d
// in all.
func (cl *Client) Expect(t mqtt.Type, d time.Duration) (*mqtt.Packet, error) {
	deadline := time.Now().Add(d)
	for i := 0; i < 1000; i++ {
		p, err := cl.Recv(time.Until(deadline))
		if err != nil {
			return nil, err
		}
		if p.Type == t {
			return p, nil
		}
	}
	return nil, errors.New("mqtttest: too many packets")
}

// Close closes the connection.
func (cl *Client) Close() error { return cl.Conn.Close() }
