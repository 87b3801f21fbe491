// Package radius reads and edits RADIUS packets (RFC 2865, RFC 2866) in
// place for the radius profile on UDP virtuals and the RADIUS:: iRules
// commands: the header, the attributes (vendor-specific ones included),
// and the authenticators an edit invalidates, signed again when the
// shared secret is known. It allocates only for an edit.
package radius

import (
	"crypto/hmac"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
)

// HeaderLen is the code, identifier, length and authenticator.
const HeaderLen = 20

// MaxLen is RFC 2865's largest packet: a longer one is not RADIUS.
const MaxLen = 4096

// Codes the profile knows the direction and signing of (RFC 2865, 2866,
// 5176).
const (
	AccessRequest      = 1
	AccessAccept       = 2
	AccessReject       = 3
	AccountingRequest  = 4
	AccountingResponse = 5
	AccessChallenge    = 11
	StatusServer       = 12
	DisconnectRequest  = 40
	DisconnectACK      = 41
	DisconnectNAK      = 42
	CoARequest         = 43
	CoAACK             = 44
	CoANAK             = 45
)

// Attribute types the codec itself needs.
const (
	AttrUserName             = 1
	AttrCallingStationID     = 31
	AttrVendorSpecific       = 26
	AttrMessageAuthenticator = 80
)

// ErrShort and its kin say why bytes are not a RADIUS packet, so that a
// profile can count and drop them.
var (
	ErrShort     = errors.New("radius: shorter than a RADIUS header (20 bytes)")
	ErrLength    = errors.New("radius: the length field is outside 20..4096 or past the datagram")
	ErrAttribute = errors.New("radius: an attribute's length runs past the packet or is under 2")
)

// Check validates b as one RADIUS packet: the header, the length field
// (bytes past it are padding, RFC 2865 §3) and every attribute's length.
// It returns the packet's length.
func Check(b []byte) (int, error) {
	if len(b) < HeaderLen {
		return 0, ErrShort
	}
	n := int(binary.BigEndian.Uint16(b[2:4]))
	if n < HeaderLen || n > MaxLen || n > len(b) {
		return 0, ErrLength
	}
	for i := HeaderLen; i < n; {
		if i+2 > n || b[i+1] < 2 || i+int(b[i+1]) > n {
			return 0, ErrAttribute
		}
		i += int(b[i+1])
	}
	return n, nil
}

// Code is the packet's code; b must have passed Check.
func Code(b []byte) uint8 { return b[0] }

// ID is the packet's identifier, which matches a response to its request.
func ID(b []byte) uint8 { return b[1] }

// Authenticator is the packet's 16-byte authenticator.
func Authenticator(b []byte) (a [16]byte) {
	copy(a[:], b[4:20])
	return a
}

// IsRequest reports whether code travels from the client (NAS) to the
// server: the profile balances these and matches the others to them.
func IsRequest(code uint8) bool {
	switch code {
	case AccessRequest, AccountingRequest, StatusServer, DisconnectRequest, CoARequest:
		return true
	}
	return false
}

// AttrID names an attribute: a type, or a vendor's attribute inside
// Vendor-Specific (26) when Vendor is not zero (RFC 2865 §5.26's
// recommended layout: vendor id, vendor type, vendor length, value).
type AttrID struct {
	Type   uint8
	Vendor uint32
	VType  uint8
}

// String is the attribute as a rule's error names it.
func (id AttrID) String() string {
	if id.Vendor != 0 {
		return fmt.Sprintf("%d (vendor %d type %d)", id.Type, id.Vendor, id.VType)
	}
	return fmt.Sprint(id.Type)
}

// find returns the value bounds and attribute bounds of the n-th (from
// 0) attribute id in packet b (length from Check); ok false when b has
// fewer.
func find(b []byte, id AttrID, n int) (vs, ve, as, ae int, ok bool) {
	end := int(binary.BigEndian.Uint16(b[2:4]))
	for i := HeaderLen; i+2 <= end; {
		l := int(b[i+1])
		if l < 2 || i+l > end {
			return 0, 0, 0, 0, false
		}
		if b[i] == id.Type {
			if id.Vendor == 0 {
				if n == 0 {
					return i + 2, i + l, i, i + l, true
				}
				n--
			} else if l >= 8 && binary.BigEndian.Uint32(b[i+2:i+6]) == id.Vendor && b[i+6] == id.VType && int(b[i+7]) >= 2 && 6+int(b[i+7]) <= l {
				if n == 0 {
					return i + 8, i + 6 + int(b[i+7]), i, i + l, true
				}
				n--
			}
		}
		i += l
	}
	return 0, 0, 0, 0, false
}

// Attr is the value of the n-th (from 0) attribute id of packet b, a
// slice of b; ok false when there are fewer.
func Attr(b []byte, id AttrID, n int) ([]byte, bool) {
	vs, ve, _, _, ok := find(b, id, n)
	if !ok {
		return nil, false
	}
	return b[vs:ve], true
}

// Count is how many attributes id packet b holds.
func Count(b []byte, id AttrID) int {
	n := 0
	for {
		if _, _, _, _, ok := find(b, id, n); !ok {
			return n
		}
		n++
	}
}

// encode is attribute id with value v, whole.
func encode(id AttrID, v []byte) ([]byte, error) {
	if id.Vendor == 0 {
		if len(v) > 253 {
			return nil, fmt.Errorf("radius: attribute %s: a value is at most 253 bytes (got %d)", id, len(v))
		}
		return append([]byte{id.Type, byte(2 + len(v))}, v...), nil
	}
	if len(v) > 247 {
		return nil, fmt.Errorf("radius: attribute %s: a vendor value is at most 247 bytes (got %d)", id, len(v))
	}
	a := []byte{id.Type, byte(8 + len(v)), 0, 0, 0, 0, id.VType, byte(2 + len(v))}
	binary.BigEndian.PutUint32(a[2:6], id.Vendor)
	return append(a, v...), nil
}

// splice is b with b[s:e] replaced by x and the length field set; the
// padding past the old length is left out.
func splice(b []byte, s, e int, x []byte) ([]byte, error) {
	end := int(binary.BigEndian.Uint16(b[2:4]))
	n := end - (e - s) + len(x)
	if n > MaxLen {
		return nil, fmt.Errorf("radius: the packet would be %d bytes, over RADIUS's %d", n, MaxLen)
	}
	out := make([]byte, 0, n)
	out = append(out, b[:s]...)
	out = append(out, x...)
	out = append(out, b[e:end]...)
	binary.BigEndian.PutUint16(out[2:4], uint16(n))
	return out, nil
}

// Replace is b with the value of its n-th attribute id set to v; an
// error when b has no such attribute or the value does not fit.
func Replace(b []byte, id AttrID, n int, v []byte) ([]byte, error) {
	_, _, as, ae, ok := find(b, id, n)
	if !ok {
		return nil, fmt.Errorf("radius: no attribute %s at index %d", id, n)
	}
	a, err := encode(id, v)
	if err != nil {
		return nil, err
	}
	return splice(b, as, ae, a)
}

// Insert is b with attribute id, value v, added before the n-th
// attribute id there is, or at the end when there are n or fewer (so
// index 0 of an absent attribute appends it).
func Insert(b []byte, id AttrID, n int, v []byte) ([]byte, error) {
	a, err := encode(id, v)
	if err != nil {
		return nil, err
	}
	at := int(binary.BigEndian.Uint16(b[2:4]))
	if _, _, as, _, ok := find(b, id, n); ok {
		at = as
	}
	return splice(b, at, at, a)
}

// Delete is b without its n-th attribute id (every one when n < 0); b
// itself when there is none to delete.
func Delete(b []byte, id AttrID, n int) ([]byte, error) {
	if n >= 0 {
		_, _, as, ae, ok := find(b, id, n)
		if !ok {
			return b, nil
		}
		return splice(b, as, ae, nil)
	}
	for {
		_, _, as, ae, ok := find(b, id, 0)
		if !ok {
			return b, nil
		}
		var err error
		if b, err = splice(b, as, ae, nil); err != nil {
			return nil, err
		}
	}
}

// messageAuth sets packet b's Message-Authenticator (RFC 3579 §3.2), if
// it has one: HMAC-MD5 with the secret over the packet, its own value
// zeroed, with auth in the authenticator field.
func messageAuth(b []byte, auth [16]byte, secret []byte) {
	vs, ve, _, _, ok := find(b, AttrID{Type: AttrMessageAuthenticator}, 0)
	if !ok || ve-vs != 16 {
		return
	}
	end := int(binary.BigEndian.Uint16(b[2:4]))
	clear(b[vs:ve])
	var keep [16]byte
	copy(keep[:], b[4:20])
	copy(b[4:20], auth[:])
	h := hmac.New(md5.New, secret)
	h.Write(b[:end])
	h.Sum(b[vs:vs])
	copy(b[4:20], keep[:])
}

// digest is MD5(code, id, length, auth, attributes, secret): a response's
// authenticator with the request's auth, an accounting, CoA or Disconnect
// request's with zeros (RFC 2866 §3, RFC 5176 §2.3).
func digest(b []byte, auth [16]byte, secret []byte) [16]byte {
	end := int(binary.BigEndian.Uint16(b[2:4]))
	h := md5.New()
	h.Write(b[:4])
	h.Write(auth[:])
	h.Write(b[20:end])
	h.Write(secret)
	var out [16]byte
	h.Sum(out[:0])
	return out
}

// SignRequest signs request b again after an edit, in place: its
// Message-Authenticator, and the Request Authenticator of the requests
// whose authenticator is a digest (Accounting-Request, Disconnect- and
// CoA-Request). An Access-Request's (and Status-Server's) is random and
// stays; the User-Password hidden with it stays valid.
func SignRequest(b []byte, secret []byte) {
	switch Code(b) {
	case AccountingRequest, DisconnectRequest, CoARequest:
		var zero [16]byte
		clear(b[4:20])
		messageAuth(b, zero, secret)
		d := digest(b, zero, secret)
		copy(b[4:20], d[:])
	default:
		messageAuth(b, Authenticator(b), secret)
	}
}

// SignResponse signs response b again after an edit, in place: its
// Message-Authenticator and Response Authenticator, both computed with
// reqAuth, the authenticator of the request it answers.
func SignResponse(b []byte, reqAuth [16]byte, secret []byte) {
	messageAuth(b, reqAuth, secret)
	d := digest(b, reqAuth, secret)
	copy(b[4:20], d[:])
}

// VerifyResponse reports whether response b's authenticator is the one
// secret and reqAuth give: how a client (and a test) tells a response
// the secret signed.
func VerifyResponse(b []byte, reqAuth [16]byte, secret []byte) bool {
	d := digest(b, reqAuth, secret)
	return hmac.Equal(d[:], b[4:20])
}

// VerifyRequest reports whether request b's digest authenticator (an
// accounting, CoA or Disconnect request) is the one secret gives; true
// for the requests whose authenticator is random.
func VerifyRequest(b []byte, secret []byte) bool {
	switch Code(b) {
	case AccountingRequest, DisconnectRequest, CoARequest:
		var zero [16]byte
		d := digest(b, zero, secret)
		return hmac.Equal(d[:], b[4:20])
	}
	return true
}
