package gtpmsg

import (
	"encoding/binary"
	"slices"
	"testing"
)

func TestRequestAnswerPairs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		h         Header
		resp, req uint8
	}{
		{"v2 create session request", Header{Version: 2, Type: CreateSessionRequest, HasSeq: true}, CreateSessionResponse, 0},
		{"v2 create session response", Header{Version: 2, Type: CreateSessionResponse, HasSeq: true}, 0, CreateSessionRequest},
		{"v2 delete session request", Header{Version: 2, Type: DeleteSessionRequest, HasSeq: true}, DeleteSessionResponse, 0},
		{"v2 create bearer request", Header{Version: 2, Type: 95, HasSeq: true}, 96, 0},
		{"v1 echo", Header{Version: 1, Type: EchoRequest, HasSeq: true}, EchoResponse, 0},
		{"v1 echo without a sequence number", Header{Version: 1, Type: EchoRequest}, 0, 0},
		{"v1 delete pdp response", Header{Version: 1, Type: DeletePDPResponse, HasSeq: true}, 0, DeletePDPRequest},
		{"g-pdu", Header{Version: 1, Type: GPDU, HasSeq: true}, 0, 0},
		{"gtp prime", Header{Prime: true, Type: 240, HasSeq: true}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, ok := tc.h.ResponseType()
			if resp != tc.resp || ok != (tc.resp != 0) {
				t.Errorf("ResponseType %d %v, want %d", resp, ok, tc.resp)
			}
			req, ok := tc.h.RequestType()
			if req != tc.req || ok != (tc.req != 0) {
				t.Errorf("RequestType %d %v, want %d", req, ok, tc.req)
			}
		})
	}
}

func TestSessionAnswers(t *testing.T) {
	imsi := "001010123456789"
	cp, up := SessionTEIDs("P1", imsi)
	if cp == up || cp == 0 || up == 0 {
		t.Fatalf("SessionTEIDs %x %x", cp, up)
	}
	if c2, _ := SessionTEIDs("P2", imsi); c2 == cp {
		t.Fatalf("two peers give one TEID %x", cp)
	}
	id, _ := EncodeTBCD(imsi)
	v2req := (&Message{Header: Header{Version: 2, Type: CreateSessionRequest, HasTEID: true, Seq: 3},
		IEs: []IE{{Type: IEv2IMSI, Value: id}, {Type: IEv2FTEID, Value: FTEID(10, 0x0a0b0c0d, [4]byte{10, 0, 0, 1})}}}).Append(nil)
	v1req := (&Message{Header: Header{Version: 1, Type: CreatePDPRequest, HasSeq: true, Seq: 4},
		IEs: []IE{{Type: IEv1IMSI, Value: id}}}).Append(nil)
	for _, tc := range []struct {
		name     string
		req      []byte
		typ      uint8
		teids    []uint32
		accepted bool
		teid     uint32 // the answer's header TEID
	}{
		{"v2 create session", v2req, CreateSessionResponse, []uint32{cp, up}, true, 0x0a0b0c0d},
		{"v1 create pdp", v1req, CreatePDPResponse, []uint32{up, cp}, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := Parse(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if req.IMSI() != imsi {
				t.Fatalf("request's IMSI %q", req.IMSI())
			}
			a, err := Parse(Respond(tc.req, "P1"))
			if err != nil {
				t.Fatal(err)
			}
			if a.Type != tc.typ || a.Accepted() != tc.accepted || a.Seq != req.Seq || a.TEID != tc.teid || Label(a) != "P1" {
				t.Fatalf("answer type %d accepted %v seq %d teid %x label %q", a.Type, a.Accepted(), a.Seq, a.TEID, Label(a))
			}
			if got := a.TEIDs(nil); !slices.Equal(got, tc.teids) {
				t.Fatalf("TEIDs %x, want %x", got, tc.teids)
			}
		})
	}
	// A refusal (cause 64, context not found) is not accepted; a G-PDU
	// comes back with its TEID and the peer's name.
	no := &Message{Header: Header{Version: 2, Type: DeleteSessionResponse}, IEs: []IE{{Type: IEv2Cause, Value: []byte{64, 0}}}}
	if no.Accepted() {
		t.Fatal("cause 64 accepted")
	}
	g := (&Message{Header: Header{Version: 1, Type: GPDU, TEID: 9}, Payload: []byte{0x45}}).Append(nil)
	a, err := Parse(Respond(g, "P1"))
	if err != nil || a.TEID != 9 || string(a.Payload) != "P1" || binary.BigEndian.Uint32(g[4:]) != 9 {
		t.Fatalf("G-PDU answer %+v %v", a, err)
	}
}
