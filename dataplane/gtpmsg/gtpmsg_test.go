package gtpmsg

import (
	"bytes"
	"testing"
)

func TestParse(t *testing.T) {
	imsi, _ := EncodeTBCD("001010123456789")
	csr := (&Message{Header: Header{Version: 2, Type: CreateSessionRequest, HasTEID: true, TEID: 7, Seq: 0x123456},
		IEs: []IE{{Type: IEv2IMSI, Value: imsi}, {Type: IEv2APN, Value: EncodeAPN("internet.mnc001.mcc001.gprs")}, {Type: 87, Instance: 1, Value: []byte{1, 2}}}}).Append(nil)
	pdp := (&Message{Header: Header{Version: 1, Type: CreatePDPRequest, HasSeq: true, Seq: 9, TEID: 5},
		IEs: []IE{{Type: IEv1IMSI, Value: imsi}, {Type: IEv1Recovery, Value: []byte{3}}, {Type: IEv1APN, Value: EncodeAPN("ims")}}}).Append(nil)
	gpdu := (&Message{Header: Header{Version: 1, Type: GPDU, TEID: 0x01020304}, Payload: []byte{0x45, 0, 0, 20}}).Append(nil)
	tests := []struct {
		name    string
		b       []byte
		err     bool
		version uint8
		typ     uint8
		ies     int
		teid    uint32
		seq     uint32
	}{
		{"v2 create session", csr, false, 2, CreateSessionRequest, 3, 7, 0x123456},
		{"v1 create pdp", pdp, false, 1, CreatePDPRequest, 3, 5, 9},
		{"v1 echo", Echo(1, 0x10042), false, 1, EchoRequest, 0, 0, 0x42},
		{"v2 echo", Echo(2, 77), false, 2, EchoRequest, 1, 0, 77},
		{"gtp-u g-pdu", gpdu, false, 1, GPDU, 0, 0x01020304, 0},
		{"gtp prime", []byte{0x0e, 4, 0, 0, 0, 9}, false, 0, 4, 0, 0, 9},
		{"short", []byte{0x32, 1}, true, 0, 0, 0, 0, 0},
		{"length past end", []byte{0x32, 1, 0, 40, 0, 0, 0, 0, 0, 1, 0, 0}, true, 0, 0, 0, 0, 0},
		{"v2 ie past end", []byte{0x40, 1, 0, 9, 0, 0, 1, 0, 3, 0, 9, 0, 0}, true, 0, 0, 0, 0, 0},
		{"v1 unknown tv", []byte{0x32, 1, 0, 6, 0, 0, 0, 0, 0, 1, 0, 0, 100, 0}, true, 0, 0, 0, 0, 0},
		{"version 3", []byte{0x60, 1, 0, 4, 0, 0, 0, 0}, true, 0, 0, 0, 0, 0},
		{"gtpv0", []byte{0x1e, 1, 0, 0, 0, 0, 0, 0}, true, 0, 0, 0, 0, 0},
		{"text", []byte("hello there"), true, 0, 0, 0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse(tc.b)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if Check(tc.b) != nil != tc.err {
				t.Fatalf("Check disagrees with Parse")
			}
			if tc.err {
				return
			}
			if m.Version != tc.version || m.Type != tc.typ || len(m.IEs) != tc.ies || m.TEID != tc.teid || m.Seq != tc.seq {
				t.Fatalf("got v%d type %d %d IEs teid %d seq %d", m.Version, m.Type, len(m.IEs), m.TEID, m.Seq)
			}
			if m.Size != len(tc.b) {
				t.Fatalf("size %d of a %d-byte message", m.Size, len(tc.b))
			}
			if again := m.Append(nil); !bytes.Equal(again, tc.b) {
				t.Fatalf("built again % x, was % x", again, tc.b)
			}
		})
	}
	m, _ := Parse(csr)
	if ie, ok := m.Find(IEv2IMSI, 0, 0); !ok || TBCD(ie.Value) != "001010123456789" {
		t.Fatalf("IMSI %q", TBCD(ie.Value))
	}
	if ie, ok := m.Find(IEv2APN, 0, 0); !ok || APN(ie.Value) != "internet.mnc001.mcc001.gprs" {
		t.Fatalf("APN %q", APN(ie.Value))
	}
	if _, ok := m.Find(87, 0, 0); ok {
		t.Fatal("instance 1 found as instance 0")
	}
}

func TestEchoAnswers(t *testing.T) {
	for _, v := range []int{1, 2} {
		req, _ := Parse(Echo(v, 1234))
		if err := EchoAnswers(Answer(req, EchoResponse, IE{Type: IEv2Recovery, Value: []byte{0}}), v, 1234); err != nil {
			t.Errorf("v%d: %v", v, err)
		}
		if err := EchoAnswers(Answer(req, EchoResponse), v, 99); err == nil {
			t.Errorf("v%d: an answer to another sequence number accepted", v)
		}
	}
}

// FuzzParse: no input panics the parser, and what it reads builds again
// into a message it reads alike.
func FuzzParse(f *testing.F) {
	f.Add(Echo(1, 1))
	f.Add(Echo(2, 1))
	f.Add([]byte{0x0e, 4, 0, 0, 0, 9})
	f.Add([]byte{0x34, 255, 0, 12, 0, 0, 0, 1, 0, 0, 0, 0x85, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			return
		}
		if m.Size > len(b) || m.HeaderLen > m.Size {
			t.Fatalf("size %d header %d of %d bytes", m.Size, m.HeaderLen, len(b))
		}
		again := m.Append(nil)
		m2, err := Parse(again)
		if err != nil {
			t.Fatalf("built again % x: %v", again, err)
		}
		if m2.Type != m.Type || m2.Version != m.Version || len(m2.IEs) != len(m.IEs) {
			t.Fatalf("built again differs")
		}
	})
}
