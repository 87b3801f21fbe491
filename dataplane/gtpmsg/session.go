package gtpmsg

import "encoding/binary"

// What a load balancer reads to keep a subscriber's session on one peer:
// which messages are requests and which answer them, the TEIDs a peer
// gives in its answer, the IMSI, and whether an answer accepts.

// More message types the profile's session tracking names.
const (
	ModifyBearerRequest   = 34 // GTPv2-C
	ModifyBearerResponse  = 35
	DeleteSessionRequest  = 36
	DeleteSessionResponse = 37
	DeletePDPRequest      = 20 // GTPv1-C
	DeletePDPResponse     = 21
)

// Information elements holding a peer's TEIDs and a v1 answer's cause.
const (
	IEv1TEIDData    = 16  // TEID Data I (TV, 4 bytes)
	IEv1TEIDControl = 17  // TEID Control Plane (TV, 4 bytes)
	IEv2FTEID       = 87  // F-TEID: flags, TEID, addresses
	IEv2BearerCtx   = 93  // Bearer Context: grouped, holds F-TEIDs
	causeV1Accepted = 128 // TS 29.060 7.7.1
	causeV2Accepted = 16  // TS 29.274 8.4
)

// responseOf maps a request's type to its response's, by version (index
// 0 for v1, 1 for v2); 0 is not a request this table knows. The pairs
// are those of TS 29.060 table 1 and TS 29.274 table 6.1-1 between two
// peers of a session [M: notifications answered by an acknowledgement
// count as requests; messages without an answer are not listed].
var responseOf = func() (t [2][256]uint8) {
	for _, p := range [][2]uint8{{1, 2}, {4, 5}, {6, 7}, {16, 17}, {18, 19}, {20, 21}, {22, 23},
		{27, 28}, {29, 30}, {32, 33}, {34, 35}, {36, 37}, {48, 49}, {50, 51}, {53, 54},
		{56, 57}, {61, 62}, {128, 129}, {240, 241}} {
		t[0][p[0]] = p[1]
	}
	for _, p := range [][2]uint8{{1, 2}, {32, 33}, {34, 35}, {36, 37}, {38, 39}, {40, 41},
		{95, 96}, {97, 98}, {99, 100}, {101, 102}, {103, 104}, {128, 129}, {130, 131},
		{133, 134}, {135, 136}, {137, 138}, {139, 140}, {149, 150}, {153, 154}, {155, 156},
		{160, 161}, {162, 163}, {164, 165}, {166, 167}, {168, 169}, {170, 171}, {176, 177},
		{179, 180}, {200, 201}, {211, 212}, {231, 232}, {233, 234}, {235, 236}} {
		t[1][p[0]] = p[1]
	}
	return t
}()

// requestOf is responseOf the other way.
var requestOf = func() (t [2][256]uint8) {
	for v := range responseOf {
		for req, resp := range responseOf[v] {
			if resp != 0 {
				t[v][resp] = uint8(req)
			}
		}
	}
	return t
}()

func versionIndex(h *Header) (int, bool) {
	switch {
	case h.Prime:
		return 0, false
	case h.Version == 1:
		return 0, true
	case h.Version == 2:
		return 1, true
	}
	return 0, false
}

// ResponseType is the type of the answer to request h, false when h is
// not a request with a known answer or has no sequence number to match
// it by.
func (h *Header) ResponseType() (uint8, bool) {
	v, ok := versionIndex(h)
	if !ok || !h.HasSeq {
		return 0, false
	}
	t := responseOf[v][h.Type]
	return t, t != 0
}

// RequestType is the type of the request h answers, false when h is no
// known answer.
func (h *Header) RequestType() (uint8, bool) {
	v, ok := versionIndex(h)
	if !ok || !h.HasSeq {
		return 0, false
	}
	t := requestOf[v][h.Type]
	return t, t != 0
}

// IMSI is the subscriber's IMSI in m's digits, "" without one.
func (m *Message) IMSI() string {
	t := uint8(IEv2IMSI)
	if m.Version == 1 {
		t = IEv1IMSI
	}
	ie, ok := m.Find(t, 0, 0)
	if !ok {
		return ""
	}
	return TBCD(ie.Value)
}

// Accepted reports whether answer m's cause accepts the request.
func (m *Message) Accepted() bool {
	if m.Version == 1 {
		ie, ok := m.Find(IEv1Cause, 0, 0)
		return ok && len(ie.Value) > 0 && ie.Value[0] == causeV1Accepted
	}
	ie, ok := m.Find(IEv2Cause, 0, 0)
	return ok && len(ie.Value) > 0 && ie.Value[0] == causeV2Accepted
}

// TEIDs appends the tunnel endpoint identifiers m's sender gives for
// itself to dst: v1's TEID Data I and TEID Control Plane IEs, v2's
// F-TEIDs, top-level and inside Bearer Contexts. Zero TEIDs are left out.
func (m *Message) TEIDs(dst []uint32) []uint32 {
	if m.Version == 1 {
		for _, ie := range m.IEs {
			if (ie.Type == IEv1TEIDData || ie.Type == IEv1TEIDControl) && len(ie.Value) == 4 {
				dst = appendTEID(dst, binary.BigEndian.Uint32(ie.Value))
			}
		}
		return dst
	}
	for _, ie := range m.IEs {
		dst = v2TEIDs(dst, ie.Type, ie.Value, 0)
	}
	return dst
}

// v2TEIDs appends the TEID of an F-TEID IE, or those inside a grouped
// Bearer Context (one level deep: F-TEIDs are not nested further).
func v2TEIDs(dst []uint32, t uint8, v []byte, depth int) []uint32 {
	switch {
	case t == IEv2FTEID && len(v) >= 5:
		return appendTEID(dst, binary.BigEndian.Uint32(v[1:]))
	case t == IEv2BearerCtx && depth == 0:
		for len(v) >= 4 {
			n := int(binary.BigEndian.Uint16(v[1:]))
			if 4+n > len(v) {
				break
			}
			dst = v2TEIDs(dst, v[0], v[4:4+n], depth+1)
			v = v[4+n:]
		}
	}
	return dst
}

func appendTEID(dst []uint32, teid uint32) []uint32 {
	if teid == 0 {
		return dst
	}
	for _, x := range dst {
		if x == teid {
			return dst
		}
	}
	return append(dst, teid)
}

// FTEID is an F-TEID IE's value for teid on an IPv4 address (interface
// type iface).
func FTEID(iface uint8, teid uint32, v4 [4]byte) []byte {
	b := []byte{0x80 | iface&0x3f, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], teid)
	return append(b, v4[:]...)
}

// Group is a grouped IE's value holding ies (GTPv2).
func Group(ies ...IE) []byte {
	var b []byte
	for _, ie := range ies {
		b = AppendIE(b, 2, false, ie)
	}
	return b
}
