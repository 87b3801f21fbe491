package rtsp

import (
	"bytes"
	"testing"
)

// FuzzReader feeds the control stream reader arbitrary bytes: it must
// neither panic nor loop, and a message it reads must encode to one it
// reads back the same; the Transport header must parse and format.
func FuzzReader(f *testing.F) {
	f.Add([]byte("OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n\r\n"))
	f.Add([]byte("SETUP rtsp://h/m RTSP/1.0\r\nCSeq: 2\r\nTransport: RTP/AVP;unicast;client_port=4588-4589\r\n\r\n"))
	f.Add([]byte("RTSP/1.0 200 OK\r\nCSeq: 2\r\nContent-Length: 3\r\n\r\nabc$\x01\x00\x02hi"))
	f.Fuzz(func(t *testing.T, in []byte) {
		rd := NewReader(bytes.NewReader(in), 512, 1024)
		var m Message
		for range 64 {
			frame, err := rd.Next(&m)
			if err != nil {
				return
			}
			if frame != nil {
				continue
			}
			var back Message
			if _, err := NewReader(bytes.NewReader(m.Encode(nil)), 1<<20, 1024).Next(&back); err != nil {
				t.Fatalf("re-reading %q: %v", m.Encode(nil), err)
			}
			if back.Method != m.Method || back.Status != m.Status || !bytes.Equal(back.Body, m.Body) {
				t.Fatalf("%+v became %+v", m, back)
			}
			if v, ok := m.Get("Transport"); ok {
				specs := ParseTransport(v)
				for i := range specs {
					if cv, ok := specs[i].Get("client_port"); ok {
						ParsePorts(cv)
					}
				}
				FormatTransport(specs)
			}
		}
	})
}
