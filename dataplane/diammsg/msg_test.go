package diammsg

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

func sample(hbh uint32, session string) []byte {
	var b []byte
	b = AppendAVP(b, AVPSessionID, AVPFlagMandatory, 0, []byte(session))
	b = AppendAVP(b, AVPOriginHost, AVPFlagMandatory, 0, []byte("client.example"))
	b = AppendAVP(b, 1234, AVPFlagMandatory, 10415, []byte("vendor"))
	b = AppendAVP(b, AVPOriginRealm, AVPFlagMandatory, 0, []byte("example"))
	return Build(FlagRequest|FlagProxiable, 272, 4, hbh, 77, b)
}

func TestParse(t *testing.T) {
	good := sample(9, "s;1")
	bad := append([]byte(nil), good...)
	bad[HeaderLen+7] = 200 // the Session-Id overruns the message
	for _, c := range []struct {
		name string
		raw  []byte
		err  bool
	}{
		{"good", good, false},
		{"short", good[:12], true},
		{"version 2", append([]byte{2}, good[1:]...), true},
		{"length differs", good[:len(good)-4], true},
		{"AVP overruns", bad, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := Parse(c.raw)
			if (err != nil) != c.err {
				t.Fatalf("Parse: %v, want error %v", err, c.err)
			}
			if err != nil {
				return
			}
			if !m.Request() || m.Code() != 272 || m.AppID() != 4 || m.HopByHop() != 9 || m.EndToEnd() != 77 {
				t.Fatalf("header: req %v code %d app %d hbh %d e2e %d", m.Request(), m.Code(), m.AppID(), m.HopByHop(), m.EndToEnd())
			}
			if got := string(m.Get(AVPSessionID)); got != "s;1" {
				t.Fatalf("Session-Id %q", got)
			}
			if a, ok := m.Find(1234, 10415); !ok || string(a.Data) != "vendor" {
				t.Fatalf("vendor AVP %+v %v", a, ok)
			}
		})
	}
}

func TestRewrite(t *testing.T) {
	m, _ := Parse(sample(1, "s;1"))
	for _, c := range []struct {
		name string
		do   func() []byte
		want map[uint32]string // AVP code: value; "" absent
	}{
		{"set longer", func() []byte { return m.Set(nil, AVPOriginHost, []byte("a-much-longer-host.example")) },
			map[uint32]string{AVPOriginHost: "a-much-longer-host.example", AVPSessionID: "s;1", AVPOriginRealm: "example"}},
		{"set new", func() []byte { return m.Set(nil, AVPDestinationRealm, []byte("far")) },
			map[uint32]string{AVPDestinationRealm: "far", AVPOriginRealm: "example"}},
		{"delete", func() []byte { a, _ := m.Find(AVPOriginHost, 0); return m.Delete(nil, a) },
			map[uint32]string{AVPOriginHost: "", AVPSessionID: "s;1", AVPOriginRealm: "example"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, err := Parse(c.do())
			if err != nil {
				t.Fatal(err)
			}
			for code, v := range c.want {
				if got := string(n.Get(code)); got != v {
					t.Errorf("AVP %d = %q, want %q", code, got, v)
				}
			}
		})
	}
}

func TestReader(t *testing.T) {
	var stream []byte
	for i := range 5 {
		stream = append(stream, sample(uint32(i), "session-"+string(rune('a'+i)))...)
	}
	for _, c := range []struct {
		name string
		r    io.Reader
	}{
		{"whole", bytes.NewReader(stream)},
		{"byte by byte", iotest.OneByteReader(bytes.NewReader(stream))},
		{"with timeouts", iotest.TimeoutReader(iotest.HalfReader(bytes.NewReader(stream)))},
	} {
		t.Run(c.name, func(t *testing.T) {
			rd := Reader{R: c.r}
			got := 0
			for range 50 {
				raw, err := rd.Next()
				if errors.Is(err, iotest.ErrTimeout) {
					continue
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				m, err := Parse(raw)
				if err != nil || m.HopByHop() != uint32(got) {
					t.Fatalf("message %d: %v hbh %d", got, err, m.HopByHop())
				}
				got++
			}
			if got != 5 {
				t.Fatalf("read %d messages, want 5", got)
			}
		})
	}
	for _, c := range []struct {
		name string
		in   []byte
		is   func(error) bool
	}{
		{"not diameter", []byte("GET / HTTP/1.1\r\n\r\n"), Malformed},
		{"too large", []byte{1, 0x7f, 0, 0, 0x80, 0, 0, 0}, Malformed},
		{"cut short", stream[:30], func(err error) bool { return err == io.ErrUnexpectedEOF }},
	} {
		t.Run(c.name, func(t *testing.T) {
			rd := Reader{R: bytes.NewReader(c.in), Max: 4096}
			if _, err := rd.Next(); !c.is(err) {
				t.Fatalf("Next: %v", err)
			}
		})
	}
}

// FuzzReader frames arbitrary streams: it never panics, never hands out
// a message whose length is not its header's, and what Parse accepts
// re-encodes to itself through Set of its own first AVP.
func FuzzReader(f *testing.F) {
	f.Add(append(sample(1, "a"), sample(2, "b")...))
	f.Add([]byte{1, 0, 0, 20, 0x80, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1})
	f.Add([]byte{1, 0, 0, 3})
	f.Fuzz(func(t *testing.T, in []byte) {
		rd := Reader{R: iotest.HalfReader(bytes.NewReader(in)), Max: 1 << 16}
		for range 64 {
			raw, err := rd.Next()
			if err != nil {
				return
			}
			if n := int(raw[1])<<16 | int(raw[2])<<8 | int(raw[3]); n != len(raw) {
				t.Fatalf("message of %d bytes, header says %d", len(raw), n)
			}
			m, err := Parse(raw)
			if err != nil {
				continue
			}
			m.Each(func(a AVP) bool {
				if a.Vendor == 0 {
					out, err := Parse(m.Replace(nil, a, a.Data))
					if err != nil || len(out.Raw) != len(raw) {
						t.Fatalf("replace with itself: %v, %d bytes of %d", err, len(out.Raw), len(raw))
					}
				}
				return false
			})
		}
	})
}
