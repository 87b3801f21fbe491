package sipmsg

import "testing"

func TestAppendWithoutTopVia(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"one field of its own",
			"SIP/2.0 200 OK\r\nVia: SIP/2.0/TCP p;branch=z9hG4bKp\r\nVia: SIP/2.0/TCP c;branch=z9hG4bKc\r\nl: 0\r\n\r\n",
			"SIP/2.0 200 OK\r\nVia: SIP/2.0/TCP c;branch=z9hG4bKc\r\nl: 0\r\n\r\n"},
		{"first of a list",
			"SIP/2.0 200 OK\r\nv: SIP/2.0/TCP p;branch=z9hG4bKp, SIP/2.0/TCP c;branch=z9hG4bKc\r\nl: 0\r\n\r\n",
			"SIP/2.0 200 OK\r\nv: SIP/2.0/TCP c;branch=z9hG4bKc\r\nl: 0\r\n\r\n"},
		{"after other fields, body kept",
			"SIP/2.0 180 Ringing\r\nCall-ID: x\r\nVIA: SIP/2.0/TCP p;branch=z9hG4bKp\r\nv: SIP/2.0/UDP c;branch=z9hG4bKc\r\nContent-Length: 2\r\n\r\nab",
			"SIP/2.0 180 Ringing\r\nCall-ID: x\r\nv: SIP/2.0/UDP c;branch=z9hG4bKc\r\nContent-Length: 2\r\n\r\nab"},
		{"none", "SIP/2.0 200 OK\r\nl: 0\r\n\r\n", "SIP/2.0 200 OK\r\nl: 0\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(AppendWithoutTopVia(nil, &m)); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAppendTop(t *testing.T) {
	in := "INVITE sip:b SIP/2.0\r\nVia: SIP/2.0/TCP c;branch=z9hG4bKc\r\nl: 0\r\n\r\n"
	got := string(AppendTop([]byte("junk"), []byte(in), []byte("Via: SIP/2.0/TCP p;branch=z9hG4bKp\r\n"), []byte("Record-Route: <sip:p;lr>\r\n")))
	want := "junkINVITE sip:b SIP/2.0\r\nVia: SIP/2.0/TCP p;branch=z9hG4bKp\r\nRecord-Route: <sip:p;lr>\r\nVia: SIP/2.0/TCP c;branch=z9hG4bKc\r\nl: 0\r\n\r\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestDialogFields(t *testing.T) {
	for _, tc := range []struct {
		msg    string
		toTag  bool
		cseq   string
		topVia string
	}{
		{"INVITE sip:b SIP/2.0\r\nVia: SIP/2.0/TCP c;branch=z9hG4bKc, SIP/2.0/TCP d\r\nTo: <sip:b@x>\r\nCSeq: 1 INVITE\r\n\r\n", false, "INVITE", "SIP/2.0/TCP c;branch=z9hG4bKc"},
		{"BYE sip:b SIP/2.0\r\nt: <sip:b@x;user=phone>;tag=99\r\nCSeq:  2   BYE\r\n\r\n", true, "BYE", ""},
		{"BYE sip:b SIP/2.0\r\nTo: sip:b@x ; TAG = 9\r\n\r\n", true, "", ""},
		{"INVITE sip:b SIP/2.0\r\nTo: \"tag=no\" <sip:b@x;tag=uri-param>\r\n\r\n", false, "", ""},
		{"SIP/2.0 200 OK\r\nTo: <sip:b@x>;tagx=1\r\nCSeq: 7 SUBSCRIBE\r\n\r\n", false, "SUBSCRIBE", ""},
	} {
		m, err := Parse([]byte(tc.msg))
		if err != nil {
			t.Fatal(err)
		}
		if got := m.HasToTag(); got != tc.toTag {
			t.Errorf("%q: HasToTag %v, want %v", tc.msg, got, tc.toTag)
		}
		if got := string(m.CSeqMethod()); got != tc.cseq {
			t.Errorf("%q: CSeqMethod %q, want %q", tc.msg, got, tc.cseq)
		}
		if got := string(m.TopVia()); got != tc.topVia {
			t.Errorf("%q: TopVia %q, want %q", tc.msg, got, tc.topVia)
		}
	}
}
