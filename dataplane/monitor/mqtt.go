package monitor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// MQTTCheck is the mqtt monitor's client: the protocol version it
// speaks, its client identifier and its login ("" for none). A broker
// that takes TCP connections may still refuse clients (its store full,
// its authentication down); only a CONNECT it accepts proves it serves.
type MQTTCheck struct {
	// Version is mqtt-version: "3" (or "3.1.1", or its protocol level
	// "4") for MQTT 3.1.1, "5" (or "5.0") for MQTT 5.0; "" is 3. BIG-IP documents the property
	// with default 3 and no list of values; 3 is taken to be 3.1.1, the
	// MQTT 3 every broker speaks (3.1's MQIsdp is obsolete) [M].
	Version                      string
	ClientID, Username, Password string
}

func (c *MQTTCheck) equal(o *MQTTCheck) bool {
	if c == nil || o == nil {
		return c == o
	}
	return *c == *o
}

// level is the CONNECT's protocol level for c.Version; 0 for a version
// the monitor does not speak.
func (c *MQTTCheck) level() byte {
	switch c.Version {
	case "", "3", "3.1.1", "4":
		return 4
	case "5", "5.0":
		return 5
	}
	return 0
}

func (c *MQTTCheck) check() error {
	if c == nil {
		return nil
	}
	if c.level() == 0 {
		return fmt.Errorf("mqtt-version %q is not 3 (MQTT 3.1.1) or 5 (MQTT 5.0)", c.Version)
	}
	for _, f := range [...]struct{ name, v string }{{"clientid", c.ClientID}, {"username", c.Username}, {"password", c.Password}} {
		if len(f.v) > 0xffff {
			return fmt.Errorf("%s is longer than MQTT's 65535 bytes", f.name)
		}
		if f.name != "password" && (!utf8.ValidString(f.v) || strings.ContainsRune(f.v, 0)) {
			return fmt.Errorf("%s must be UTF-8 without NUL", f.name)
		}
	}
	if c.Password != "" && c.Username == "" && c.level() == 4 {
		return errors.New("password needs username: MQTT 3.1.1 sends no password without a user name")
	}
	return nil
}

// mqttKeepAlive is the CONNECT's keep-alive in seconds; the probe
// disconnects long before it matters, but 0 would ask the broker to
// never time the client out [M].
const mqttKeepAlive = 60

// mqttConnect is the CONNECT packet: a clean session (clean start) with
// the client identifier (empty when none: the broker assigns one, which
// MQTT allows with a clean session) and the login.
func mqttConnect(c *MQTTCheck) []byte {
	str := func(b []byte, s string) []byte { return append(append(b, byte(len(s)>>8), byte(len(s))), s...) }
	level := c.level()
	flags := byte(0x02)
	if c.Username != "" {
		flags |= 0x80
	}
	if c.Password != "" {
		flags |= 0x40
	}
	body := str(nil, "MQTT")
	body = append(body, level, flags, mqttKeepAlive>>8, mqttKeepAlive&0xff)
	if level == 5 {
		body = append(body, 0) // no properties
	}
	body = str(body, c.ClientID)
	if c.Username != "" {
		body = str(body, c.Username)
	}
	if c.Password != "" {
		body = str(body, c.Password)
	}
	pkt := []byte{0x10}
	for n := len(body); ; {
		b := byte(n % 128)
		if n /= 128; n > 0 {
			b |= 0x80
		}
		pkt = append(pkt, b)
		if n == 0 {
			break
		}
	}
	return append(pkt, body...)
}

// mqttRefusals words the CONNACK codes that refuse a client: MQTT
// 3.1.1's return codes and MQTT 5.0's reason codes.
var mqttRefusals = map[byte]string{
	1: "unacceptable protocol version", 2: "identifier rejected", 3: "server unavailable",
	4: "bad user name or password", 5: "not authorized",
	0x80: "unspecified error", 0x81: "malformed packet", 0x82: "protocol error", 0x83: "implementation specific error",
	0x84: "unsupported protocol version", 0x85: "client identifier not valid", 0x86: "bad user name or password",
	0x87: "not authorized", 0x88: "server unavailable", 0x89: "server busy", 0x8a: "banned",
	0x8c: "bad authentication method", 0x95: "packet too large", 0x97: "quota exceeded",
}

// probeMQTT sends a CONNECT and is up when the first packet back is a
// CONNACK with code 0; it then sends DISCONNECT and closes. BIG-IP
// documents no topic for the monitor, so nothing is subscribed or
// published.
func probeMQTT(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	c := spec.MQTT
	if c == nil {
		c = &MQTTCheck{}
	}
	if err := c.check(); err != nil {
		return Outcome{}, err
	}
	conn, err := dial(ctx, target)
	if err != nil {
		return Outcome{}, err
	}
	defer conn.Close()
	defer bound(ctx, conn)()
	if _, err := conn.Write(mqttConnect(c)); err != nil {
		return Outcome{}, fmt.Errorf("Unable to send; %v", unwrapSyscall(err))
	}
	r := bufio.NewReader(&capped{r: conn, left: maxReply})
	typ, body, err := mqttPacket(r)
	if err != nil {
		return Outcome{}, streamFailure(ctx, err, "CONNACK")
	}
	if typ != 2 || len(body) < 2 {
		return Outcome{}, fmt.Errorf("Unexpected response: MQTT packet type %d, not CONNACK", typ)
	}
	if code := body[1]; code != 0 {
		why := mqttRefusals[code]
		if why == "" {
			why = "refused"
		}
		return Outcome{}, fmt.Errorf("Connection refused by the broker: code %d (%s)", code, why)
	}
	conn.Write([]byte{0xe0, 0x00}) // DISCONNECT; the verdict does not wait on it
	return Outcome{Up: true}, nil
}

// mqttPacket reads one packet: its type (the fixed header's high
// nibble) and its body.
func mqttPacket(r *bufio.Reader) (typ byte, body []byte, err error) {
	h, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	n, shift := 0, 0
	for i := 0; ; i++ {
		b, err := r.ReadByte()
		if err != nil {
			return 0, nil, err
		}
		n |= int(b&0x7f) << shift
		if b&0x80 == 0 {
			break
		}
		if shift += 7; i == 3 {
			return 0, nil, errors.New("malformed MQTT packet length")
		}
	}
	if n > maxReply {
		return 0, nil, errTooLong
	}
	body = make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, nil, err
	}
	return h >> 4, body, nil
}

// streamFailure words a failed read of the answer named what: the
// deadline is no response, a close before it a closed connection.
func streamFailure(ctx context.Context, err error, what string) error {
	switch {
	case ctx.Err() != nil || netTimeout(err):
		return ErrNoResponse
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("Connection closed before the %s", what)
	case errors.Is(err, errTooLong):
		return err
	}
	return fmt.Errorf("Unable to receive; %v", unwrapSyscall(err))
}
