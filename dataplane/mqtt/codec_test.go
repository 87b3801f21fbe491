package mqtt

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
	"testing/iotest"
)

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version uint8
		p       Packet
	}{
		{"connect 3.1.1", V311, Packet{Type: CONNECT, ProtocolName: "MQTT", ProtocolVersion: V311, CleanSession: true, KeepAlive: 60, ClientID: "dev-1"}},
		{"connect all", V311, Packet{Type: CONNECT, ProtocolName: "MQTT", ProtocolVersion: V311, KeepAlive: 10, ClientID: "c",
			Will: true, WillQoS: 1, WillRetain: true, WillTopic: "w/t", WillMessage: []byte("bye"),
			HasUsername: true, Username: "u", HasPassword: true, Password: []byte("p\x00w")}},
		{"connect 3.1", V31, Packet{Type: CONNECT, ProtocolName: "MQIsdp", ProtocolVersion: V31, ClientID: "old"}},
		{"connect 5", V5, Packet{Type: CONNECT, ProtocolName: "MQTT", ProtocolVersion: V5, ClientID: "five", Props: []byte{0x11, 0, 0, 0, 10},
			Will: true, WillProps: []byte{0x01, 1}, WillTopic: "t", WillMessage: []byte("m"), HasPassword: true, Password: []byte("pw")}},
		{"connack", V311, Packet{Type: CONNACK, SessionPresent: true, ReturnCode: 5}},
		{"connack 5", V5, Packet{Type: CONNACK, ReturnCode: 0x87, Props: []byte{0x1f, 0, 1, 'x'}}},
		{"publish qos0", V311, Packet{Type: PUBLISH, Topic: "a/b", Payload: []byte("hello"), Retain: true, Flags: 1}},
		{"publish qos2 dup", V311, Packet{Type: PUBLISH, Topic: "a", QoS: 2, Dup: true, PacketID: 7, Payload: []byte{}, Flags: 0xc}},
		{"publish 5", V5, Packet{Type: PUBLISH, Topic: "a", QoS: 1, PacketID: 9, Props: []byte{0x23, 0, 3}, Payload: []byte("x"), Flags: 2}},
		{"puback", V311, Packet{Type: PUBACK, PacketID: 3}},
		{"pubrel", V311, Packet{Type: PUBREL, PacketID: 3, Flags: 2}},
		{"pubcomp 5 reason", V5, Packet{Type: PUBCOMP, PacketID: 3, Rest: []byte{0x92, 0}}},
		{"subscribe", V311, Packet{Type: SUBSCRIBE, PacketID: 1, Flags: 2, Subscriptions: []Subscription{{"a/#", 1}, {"b/+", 2}}}},
		{"subscribe 5", V5, Packet{Type: SUBSCRIBE, PacketID: 1, Flags: 2, Props: []byte{}, Subscriptions: []Subscription{{"a", 0x2d}}}},
		{"suback", V311, Packet{Type: SUBACK, PacketID: 1, ReturnCodes: []byte{1, 0x80}}},
		{"unsubscribe", V311, Packet{Type: UNSUBSCRIBE, PacketID: 4, Flags: 2, Subscriptions: []Subscription{{"a", 0}}}},
		{"unsuback", V311, Packet{Type: UNSUBACK, PacketID: 4}},
		{"unsuback 5", V5, Packet{Type: UNSUBACK, PacketID: 4, Props: []byte{}, ReturnCodes: []byte{0, 0x11}}},
		{"pingreq", V311, Packet{Type: PINGREQ}},
		{"pingresp", V311, Packet{Type: PINGRESP}},
		{"disconnect", V311, Packet{Type: DISCONNECT}},
		{"disconnect 5", V5, Packet{Type: DISCONNECT, Rest: []byte{0x04, 0}}},
		{"auth", V5, Packet{Type: AUTH, Rest: []byte{0x18, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := tc.p.Encode(nil, tc.version)
			if n, err := Frame(raw, 0); err != nil || n != len(raw) {
				t.Fatalf("Frame = %d, %v; want %d", n, err, len(raw))
			}
			got, err := Decode(raw, tc.version)
			if err != nil {
				t.Fatalf("Decode(% x): %v", raw, err)
			}
			norm(got)
			want := tc.p
			norm(&want)
			if !reflect.DeepEqual(*got, want) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", *got, want)
			}
			if again := got.Encode(nil, tc.version); !bytes.Equal(again, raw) {
				t.Fatalf("re-encoded % x, first % x", again, raw)
			}
			if err := got.Check(tc.version); err != nil {
				t.Fatalf("Check: %v", err)
			}
		})
	}
}

// norm makes empty and nil slices alike for comparison.
func norm(p *Packet) {
	for _, b := range []*[]byte{&p.WillProps, &p.WillMessage, &p.Password, &p.Payload, &p.ReturnCodes, &p.Props, &p.Rest} {
		if len(*b) == 0 {
			*b = nil
		}
	}
}

func TestMalformed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		raw     []byte
		version uint8
	}{
		{"type 0", []byte{0x00, 0}, V311},
		{"publish qos 3", []byte{0x36, 3, 0, 1, 'a'}, V311},
		{"publish id 0", []byte{0x32, 5, 0, 1, 'a', 0, 0}, V311},
		{"subscribe flags", []byte{0x80, 6, 0, 1, 0, 1, 'a', 0}, V311},
		{"subscribe no topics", []byte{0x82, 2, 0, 1}, V311},
		{"subscribe qos 3", []byte{0x82, 6, 0, 1, 0, 1, 'a', 3}, V311},
		{"pingreq flags", []byte{0xc1, 0}, V311},
		{"pingreq body", []byte{0xc0, 1, 0}, V311},
		{"puback long", []byte{0x40, 3, 0, 1, 0}, V311},
		{"connack flags", []byte{0x20, 2, 2, 0}, V311},
		{"auth in 3.1.1", []byte{0xf0, 0}, V311},
		{"connect bad protocol", connectWith("HTTP", 4, 2), 0},
		{"connect bad level", connectWith("MQTT", 9, 2), 0},
		{"connect reserved flag", connectWith("MQTT", 4, 3), 0},
		{"connect will qos without will", connectWith("MQTT", 4, 0x08), 0},
		{"connect password without user", connectWith("MQTT", 4, 0x40), 0},
		{"connect short", []byte{0x10, 4, 0, 4, 'M', 'Q'}, 0},
		{"topic not utf-8", []byte{0x30, 4, 0, 2, 0xff, 0xfe}, V311},
		{"topic with NUL", []byte{0x30, 4, 0, 2, 'a', 0}, V311},
		{"five length bytes", []byte{0x30, 0xff, 0xff, 0xff, 0xff, 0x01}, V311},
		{"truncated", []byte{0x30, 10, 0, 1, 'a'}, V311},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e *Error
			if _, err := Decode(tc.raw, tc.version); !errors.As(err, &e) {
				t.Fatalf("Decode(% x) = %v, want a malformed-packet error", tc.raw, err)
			}
		})
	}
}

// connectWith is a CONNECT with the given protocol and flags and an
// empty client id.
func connectWith(name string, level, flags uint8) []byte {
	body := appendStr(nil, name)
	body = append(body, level, flags, 0, 60)
	body = appendStr(body, "")
	return append(appendVarint([]byte{0x10}, len(body)), body...)
}

func TestFrame(t *testing.T) {
	big := appendVarint([]byte{0x30}, MaxRemaining)
	for _, tc := range []struct {
		name string
		b    []byte
		max  int
		n    int
		err  bool
	}{
		{"empty", nil, 0, 0, false},
		{"one byte", []byte{0xc0}, 0, 0, false},
		{"ping", []byte{0xc0, 0, 0xd0}, 0, 2, false},
		{"length continues", []byte{0x30, 0x80}, 0, 0, false},
		{"two length bytes, body short", []byte{0x30, 0x80, 0x01, 0}, 0, 0, false},
		{"largest length, header only", big, 0, 0, false},
		{"over the maximum", big, 1 << 20, 0, true},
		{"at the maximum", []byte{0x30, 4, 0, 1, 'a', 'b'}, 4, 6, false},
		{"one past", []byte{0x30, 5, 0, 1, 'a', 'b', 'c'}, 4, 0, true},
		{"five length bytes", []byte{0x30, 0x80, 0x80, 0x80, 0x80, 0x01}, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := Frame(tc.b, tc.max)
			if n != tc.n || (err != nil) != tc.err {
				t.Fatalf("Frame(% x, %d) = %d, %v; want %d, error %v", tc.b, tc.max, n, err, tc.n, tc.err)
			}
		})
	}
}

func TestReader(t *testing.T) {
	var stream []byte
	pkts := []Packet{
		{Type: CONNECT, ProtocolName: "MQTT", ProtocolVersion: V311, ClientID: "r"},
		{Type: PUBLISH, Topic: "t", Payload: bytes.Repeat([]byte("x"), 10000)},
		{Type: PINGREQ},
	}
	for _, p := range pkts {
		stream = p.Encode(stream, V311)
	}
	r := &Reader{R: iotest.OneByteReader(bytes.NewReader(stream))}
	for i, p := range pkts {
		raw, err := r.Next()
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		if want := p.Encode(nil, V311); !bytes.Equal(raw, want) {
			t.Fatalf("packet %d differs", i)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the last packet: %v, want EOF", err)
	}
	// A stream that ends inside a packet is malformed; one whose packet
	// passes the bound is refused before its body is read.
	r = &Reader{R: bytes.NewReader(stream[:len(stream)-5])}
	var err error
	for i := 0; i < 4 && err == nil; i++ {
		_, err = r.Next()
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("truncated stream: %v, want a malformed-packet error", err)
	}
	r = &Reader{R: bytes.NewReader(stream), Max: 100}
	r.Next()
	if _, err := r.Next(); err != ErrTooLarge {
		t.Fatalf("oversized packet: %v, want ErrTooLarge", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(connectWith("MQTT", 4, 2), uint8(0))
	f.Add((&Packet{Type: PUBLISH, Topic: "a", QoS: 1, PacketID: 1, Payload: []byte("p")}).Encode(nil, V5), uint8(V5))
	f.Add((&Packet{Type: SUBSCRIBE, PacketID: 1, Subscriptions: []Subscription{{"a", 1}}}).Encode(nil, V311), uint8(V311))
	f.Fuzz(func(t *testing.T, raw []byte, version uint8) {
		n, err := Frame(raw, 1<<16)
		if err != nil || n == 0 {
			return
		}
		p, err := Decode(raw[:n], version)
		if err != nil {
			return
		}
		v := version
		if p.Type == CONNECT {
			v = p.ProtocolVersion
		} else if v == 0 {
			v = V311
		}
		// What decodes re-encodes to a packet that decodes alike.
		again := p.Encode(nil, v)
		q, err := Decode(again, v)
		if err != nil {
			t.Fatalf("re-encoded % x does not decode: %v", again, err)
		}
		norm(p)
		norm(q)
		p.Flags, q.Flags = 0, 0
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("re-encoded differs:\n%+v\n%+v", p, q)
		}
	})
}
