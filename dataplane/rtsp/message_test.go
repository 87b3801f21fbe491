package rtsp

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	stream := "OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n\r\n" +
		"$\x00\x00\x03abc" +
		"\r\nANNOUNCE rtsp://h/m RTSP/1.0\r\nCSeq: 2\r\nContent-Length: 5\r\nX-Long: a\r\n b\r\n\r\nhello" +
		"RTSP/1.0 200 OK\r\nCSeq: 2\r\n\r\n"
	rd := NewReader(strings.NewReader(stream), 0, 0)
	var m Message
	for i, want := range []string{"OPTIONS *", "$abc", "ANNOUNCE rtsp://h/m hello", "200 OK"} {
		frame, err := rd.Next(&m)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		var got string
		switch {
		case frame != nil:
			got = "$" + string(frame[4:])
		case m.Request:
			got = strings.TrimSpace(m.Method + " " + m.URI + " " + string(m.Body))
		default:
			got = "200 " + m.Reason
		}
		if got != want {
			t.Fatalf("%d: %q, want %q", i, got, want)
		}
		if i == 2 {
			if v, _ := m.Get("x-long"); v != "a b" {
				t.Fatalf("folded header %q", v)
			}
		}
	}
}

func TestReaderErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		want error
	}{
		{"GET\r\n\r\n", ErrMalformed},
		{"OPTIONS * HTTP/1.1\r\n\r\n", ErrMalformed},
		{"OPTIONS * RTSP/1.0\r\nbad header\r\n\r\n", ErrMalformed},
		{"OPTIONS * RTSP/1.0\r\nContent-Length: -1\r\n\r\n", ErrMalformed},
		{"OPTIONS * RTSP/1.0\r\nContent-Length: 99999999\r\n\r\n", ErrBodyTooLarge},
		{"OPTIONS * RTSP/1.0\r\nX: " + strings.Repeat("a", 5000) + "\r\n\r\n", ErrHeaderTooLarge},
		{"RTSP/1.0 2x OK\r\n\r\n", ErrMalformed},
	} {
		var m Message
		_, err := NewReader(strings.NewReader(c.in), 0, 0).Next(&m)
		if !errors.Is(err, c.want) {
			t.Errorf("%q: %v, want %v", c.in[:min(len(c.in), 40)], err, c.want)
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	m := &Message{Request: true, Method: "SETUP", URI: "rtsp://h/m/track1", Version: "RTSP/1.0"}
	m.Add("CSeq", "3")
	m.Add("Transport", "RTP/AVP;unicast;client_port=4588-4589")
	m.Body = []byte("x=1")
	var got Message
	if _, err := NewReader(bytes.NewReader(m.Encode(nil)), 0, 0).Next(&got); err != nil {
		t.Fatal(err)
	}
	if got.CSeq() != 3 || string(got.Body) != "x=1" || got.URI != m.URI {
		t.Fatalf("%+v", got)
	}
	got.Set("cseq", "4")
	got.Remove("TRANSPORT")
	if got.CSeq() != 4 || len(got.Values("Transport")) != 0 {
		t.Fatalf("%+v", got.Fields)
	}
}

func TestTransport(t *testing.T) {
	for _, c := range []struct {
		in, client, rewritten string
		udp                   bool
	}{
		{"RTP/AVP;unicast;client_port=4588-4589", "4588-4589", "RTP/AVP;unicast;client_port=6000-6001", true},
		{"RTP/AVP/UDP;unicast;client_port=4588", "4588", "RTP/AVP/UDP;unicast;client_port=6000-6001", true},
		{"RTP/AVP/TCP;unicast;interleaved=0-1", "", "RTP/AVP/TCP;unicast;interleaved=0-1;client_port=6000-6001", false},
		{"RTP/AVP;unicast;interleaved=2-3", "", "RTP/AVP;unicast;interleaved=2-3;client_port=6000-6001", false},
	} {
		specs := ParseTransport(c.in)
		if len(specs) != 1 || specs[0].UDP() != c.udp {
			t.Fatalf("%q: %+v", c.in, specs)
		}
		if v, _ := specs[0].Get("client_port"); v != c.client {
			t.Fatalf("%q: client_port %q", c.in, v)
		}
		specs[0].Set("client_port", Ports{6000, 6001}.String())
		if got := FormatTransport(specs); got != c.rewritten {
			t.Fatalf("%q: %q, want %q", c.in, got, c.rewritten)
		}
	}
	if specs := ParseTransport("RTP/AVP;multicast;ttl=127, RTP/AVP;unicast;client_port=1-2"); len(specs) != 2 || !specs[0].Multicast() || specs[1].Multicast() {
		t.Fatalf("%+v", specs)
	}
	for in, ok := range map[string]bool{"1-2": true, "7": true, "0": false, "9-3": false, "x": false, "70000": false} {
		if _, got := ParsePorts(in); got != ok {
			t.Errorf("ParsePorts(%q) = %v", in, got)
		}
	}
}
