package monitor

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// mqttConnectSeen is a CONNECT as the fake broker read it.
type mqttConnectSeen struct {
	proto              string
	level, flags       byte
	id, user, password string
}

// fakeBroker reads one CONNECT per connection and writes what answer
// says to it (nil: closes the connection); seen gets each CONNECT, and whether a DISCONNECT followed
// the answer.
func fakeBroker(t *testing.T, answer func(mqttConnectSeen) []byte) (netip.AddrPort, chan string) {
	t.Helper()
	seen := make(chan string, 8)
	target, err := echoServer(t, "127.0.0.1:0", func(c net.Conn) {
		r := bufio.NewReader(c)
		h, _ := r.ReadByte()
		n, _ := r.ReadByte() // the probe's CONNECTs are shorter than 128 bytes
		body := make([]byte, n)
		if h != 0x10 || n >= 128 {
			return
		}
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		str := func() string {
			if len(body) < 2 {
				return ""
			}
			l := int(binary.BigEndian.Uint16(body))
			s := string(body[2 : 2+l])
			body = body[2+l:]
			return s
		}
		var s mqttConnectSeen
		s.proto = str()
		s.level, s.flags, body = body[0], body[1], body[4:]
		if s.level == 5 {
			body = body[1:] // properties: the probe sends none
		}
		s.id = str()
		if s.flags&0x80 != 0 {
			s.user = str()
		}
		if s.flags&0x40 != 0 {
			s.password = str()
		}
		a := answer(s)
		if a == nil {
			return // closed without an answer
		}
		c.Write(a)
		disc := make([]byte, 2)
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err := io.ReadFull(r, disc)
		seen <- fmt.Sprintf("%s %d %#x id=%q user=%q password=%q disconnect=%v", s.proto, s.level, s.flags, s.id, s.user, s.password,
			err == nil && disc[0] == 0xe0 && disc[1] == 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	return target, seen
}

// broker311 accepts mon/pw, or anyone when no user is set; it speaks
// only MQTT 3.1.1 and wants a client id when strict.
func broker311(strict bool) func(mqttConnectSeen) []byte {
	return func(s mqttConnectSeen) []byte {
		switch {
		case s.proto != "MQTT" || s.level != 4:
			return []byte{0x20, 2, 0, 1}
		case strict && s.id == "":
			return []byte{0x20, 2, 0, 2}
		case s.user != "" && (s.user != "mon" || s.password != "pw"):
			return []byte{0x20, 2, 0, 4}
		}
		return []byte{0x20, 2, 0, 0}
	}
}

func TestProbeMQTT(t *testing.T) {
	broker5 := func(s mqttConnectSeen) []byte {
		if s.level != 5 {
			return []byte{0x20, 3, 0, 0x84, 0}
		}
		return []byte{0x20, 3, 0, 0, 0}
	}
	for _, c := range []struct {
		name     string
		check    *MQTTCheck
		answer   func(mqttConnectSeen) []byte
		deadline time.Duration
		up       bool
		seen     string // what the broker saw, when set
		errSub   string
		errIs    error
	}{
		{name: "defaults", answer: broker311(false), up: true, seen: `MQTT 4 0x2 id="" user="" password="" disconnect=true`},
		{name: "login", check: &MQTTCheck{Username: "mon", Password: "pw", ClientID: "ltm-1"}, answer: broker311(true), up: true,
			seen: `MQTT 4 0xc2 id="ltm-1" user="mon" password="pw" disconnect=true`},
		{name: "bad password", check: &MQTTCheck{Username: "mon", Password: "nope"}, answer: broker311(false),
			errSub: "Connection refused by the broker: code 4 (bad user name or password)"},
		{name: "client id wanted", check: &MQTTCheck{}, answer: broker311(true), errSub: "code 2 (identifier rejected)"},
		{name: "MQTT 5", check: &MQTTCheck{Version: "5"}, answer: broker5, up: true, seen: `MQTT 5 0x2 id=""`},
		{name: "MQTT 5 password alone", check: &MQTTCheck{Version: "5", Password: "tok"}, answer: broker5, up: true,
			seen: `MQTT 5 0x42 id="" user="" password="tok"`},
		{name: "MQTT 5 to a 3.1.1 broker", check: &MQTTCheck{Version: "5"}, answer: broker311(false),
			errSub: "code 1 (unacceptable protocol version)"},
		{name: "MQTT 3 to a 5 broker", check: &MQTTCheck{Version: "3.1.1"}, answer: broker5,
			errSub: "code 132 (unsupported protocol version)"},
		{name: "not a CONNACK", answer: func(mqttConnectSeen) []byte { return []byte{0x90, 3, 0, 1, 0} },
			errSub: "MQTT packet type 9, not CONNACK"},
		{name: "closed", answer: func(mqttConnectSeen) []byte { return nil }, errSub: "Connection closed before the CONNACK"},
		{name: "silent", answer: func(mqttConnectSeen) []byte { time.Sleep(time.Second); return nil },
			deadline: 300 * time.Millisecond, errIs: ErrNoResponse},
	} {
		t.Run(c.name, func(t *testing.T) {
			target, seen := fakeBroker(t, c.answer)
			d := c.deadline
			if d == 0 {
				d = 5 * time.Second
			}
			o, err := probe(t, &Spec{Type: MQTT, MQTT: c.check}, target, d)
			wantVerdict(t, o, err, c.up, c.errSub, c.errIs)
			if c.seen == "" {
				return
			}
			select {
			case got := <-seen:
				if !strings.HasPrefix(got, c.seen) {
					t.Errorf("broker saw %s, want %s", got, c.seen)
				}
			case <-time.After(5 * time.Second):
				t.Error("the broker saw no CONNECT")
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		o, err := probe(t, &Spec{Type: MQTT}, closedPort(t, "127.0.0.1:0"), 5*time.Second)
		wantVerdict(t, o, err, false, "Unable to connect", nil)
	})
}

func TestMQTTCheck(t *testing.T) {
	for _, c := range []struct {
		check *MQTTCheck
		err   string
	}{
		{&MQTTCheck{}, ""},
		{&MQTTCheck{Version: "3"}, ""},
		{&MQTTCheck{Version: "5", Password: "tok"}, ""},
		{&MQTTCheck{Version: "3.1"}, `mqtt-version "3.1" is not 3 (MQTT 3.1.1) or 5 (MQTT 5.0)`},
		{&MQTTCheck{Password: "pw"}, "password needs username"},
		{&MQTTCheck{ClientID: "a\x00b"}, "clientid must be UTF-8 without NUL"},
		{&MQTTCheck{Username: strings.Repeat("u", 70000)}, "username is longer than MQTT's 65535 bytes"},
	} {
		err := c.check.check()
		if (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+.40v: check() = %v, want %q", c.check, err, c.err)
		}
	}
	// A CONNECT longer than 127 bytes has a two-byte remaining length.
	p := mqttConnect(&MQTTCheck{Username: "u", Password: strings.Repeat("p", 200)})
	if p[0] != 0x10 || p[1]&0x80 == 0 || int(p[1]&0x7f)+int(p[2])*128 != len(p)-3 {
		t.Errorf("CONNECT header % x, length %d", p[:3], len(p))
	}
}
