package radius

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"encoding/hex"
	"strings"
	"testing"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The Access-Request and Access-Accept of RFC 2865 §7.1 (secret xyzzy5461).
const (
	rfcRequest = `01 00 00 38 0f 40 3f 94 73 97 80 57 bd 83 d5 cb
98 f4 22 7a 01 06 6e 65 6d 6f 02 12 0d be 70 8d
93 d4 13 ce 31 96 e4 3f 78 2a 0a ee 04 06 c0 a8
01 10 05 06 00 00 00 03`
	rfcAccept = `02 00 00 26 86 fe 22 0e 76 24 ba 2a 10 05 f6 bf
9b 55 e0 b2 06 06 00 00 00 01 0f 06 00 00 00 00
0e 06 c0 a8 01 03`
	rfcSecret = "xyzzy5461"
)

func TestCheck(t *testing.T) {
	req := unhex(t, rfcRequest)
	for _, c := range []struct {
		name string
		b    []byte
		n    int
		err  error
	}{
		{"rfc request", req, 56, nil},
		{"padding past length", append(append([]byte{}, req...), 0, 0, 0), 56, nil},
		{"short", req[:19], 0, ErrShort},
		{"length past datagram", req[:40], 0, ErrLength},
		{"length under header", append([]byte{1, 0, 0, 19}, make([]byte, 16)...), 0, ErrLength},
		{"attribute past packet", append([]byte{1, 0, 0, 22}, append(make([]byte, 16), 1, 9)...), 0, ErrAttribute},
		{"attribute length 1", append([]byte{1, 0, 0, 22}, append(make([]byte, 16), 1, 1)...), 0, ErrAttribute},
	} {
		n, err := Check(c.b)
		if n != c.n || err != c.err {
			t.Errorf("%s: Check = %d, %v; want %d, %v", c.name, n, err, c.n, c.err)
		}
	}
}

func TestRFCExampleAuthenticators(t *testing.T) {
	req, acc := unhex(t, rfcRequest), unhex(t, rfcAccept)
	if Code(req) != AccessRequest || ID(req) != 0 || !IsRequest(Code(req)) || IsRequest(Code(acc)) {
		t.Fatalf("header: code %d id %d", Code(req), ID(req))
	}
	if !VerifyResponse(acc, Authenticator(req), []byte(rfcSecret)) {
		t.Fatal("the RFC's Access-Accept does not verify with its request's authenticator")
	}
	if VerifyResponse(acc, Authenticator(req), []byte("other")) {
		t.Fatal("verified with a wrong secret")
	}
	// Signing the unedited response again gives the RFC's bytes.
	again := append([]byte{}, acc...)
	SignResponse(again, Authenticator(req), []byte(rfcSecret))
	if !bytes.Equal(again, acc) {
		t.Fatalf("SignResponse changed an unedited response:\n%x\n%x", again, acc)
	}
}

func TestAttributes(t *testing.T) {
	req := unhex(t, rfcRequest)
	v, ok := Attr(req, AttrID{Type: AttrUserName}, 0)
	if !ok || string(v) != "nemo" {
		t.Fatalf("User-Name = %q %v", v, ok)
	}
	v, _ = Attr(req, AttrID{Type: 4}, 0)
	if s, _ := Format(v, TypeIP4); s != "192.168.1.16" {
		t.Fatalf("NAS-IP-Address = %s", s)
	}
	v, _ = Attr(req, AttrID{Type: 5}, 0)
	if s, _ := Format(v, TypeInteger); s != "3" {
		t.Fatalf("NAS-Port = %s", s)
	}
	csid := AttrID{Type: AttrCallingStationID}
	vsa := AttrID{Type: AttrVendorSpecific, Vendor: 3076, VType: 1}
	steps := []struct {
		name string
		edit func([]byte) ([]byte, error)
		want func([]byte) string // "" when good
	}{
		{"insert absent appends", func(b []byte) ([]byte, error) { return Insert(b, csid, 0, []byte("00-11")) }, func(b []byte) string {
			if v, ok := Attr(b, csid, 0); !ok || string(v) != "00-11" || Count(b, csid) != 1 {
				return "no Calling-Station-Id 00-11"
			}
			return ""
		}},
		{"insert before index 0", func(b []byte) ([]byte, error) { return Insert(b, csid, 0, []byte("first")) }, func(b []byte) string {
			if v, _ := Attr(b, csid, 0); string(v) != "first" {
				return "index 0 is " + string(v)
			}
			if v, _ := Attr(b, csid, 1); string(v) != "00-11" {
				return "index 1 is " + string(v)
			}
			return ""
		}},
		{"replace index 1", func(b []byte) ([]byte, error) { return Replace(b, csid, 1, []byte("a-much-longer-value")) }, func(b []byte) string {
			if v, _ := Attr(b, csid, 1); string(v) != "a-much-longer-value" {
				return "index 1 is " + string(v)
			}
			return ""
		}},
		{"vendor insert", func(b []byte) ([]byte, error) { return Insert(b, vsa, 0, []byte("vv")) }, func(b []byte) string {
			if v, ok := Attr(b, vsa, 0); !ok || string(v) != "vv" {
				return "vendor attribute missing"
			}
			if _, ok := Attr(b, AttrID{Type: 26, Vendor: 9, VType: 1}, 0); ok {
				return "another vendor's matched"
			}
			return ""
		}},
		{"delete all", func(b []byte) ([]byte, error) { return Delete(b, csid, -1) }, func(b []byte) string {
			if Count(b, csid) != 0 {
				return "still there"
			}
			if v, _ := Attr(b, AttrID{Type: AttrUserName}, 0); string(v) != "nemo" {
				return "User-Name lost"
			}
			return ""
		}},
	}
	b := req
	for _, s := range steps {
		out, err := s.edit(b)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if n, err := Check(out); err != nil || n != len(out) {
			t.Fatalf("%s: the edited packet does not check: %d %v", s.name, n, err)
		}
		if msg := s.want(out); msg != "" {
			t.Fatalf("%s: %s", s.name, msg)
		}
		b = out
	}
	if _, err := Replace(req, csid, 0, []byte("x")); err == nil {
		t.Fatal("Replace of an absent attribute did not fail")
	}
	if _, err := Insert(req, csid, 0, make([]byte, 254)); err == nil {
		t.Fatal("a 254-byte value was taken")
	}
	big := req
	for i := 0; i < 25; i++ {
		var err error
		if big, err = Insert(big, csid, 0, make([]byte, 200)); err != nil {
			if !strings.Contains(err.Error(), "4096") {
				t.Fatalf("err %v", err)
			}
			return
		}
	}
	t.Fatal("a packet past 4096 bytes was made")
}

// TestSignAgainstLayeh signs edited packets and checks them with an
// independent implementation (layeh.com/radius) and RFC 3579's
// Message-Authenticator computed here.
func TestSignAgainstLayeh(t *testing.T) {
	secret := []byte("s3cr3t")
	acct := radius.New(radius.CodeAccountingRequest, secret)
	rfc2865.UserName_SetString(acct, "alice")
	rfc2866.AcctSessionID_SetString(acct, "sess-1")
	raw, err := acct.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !VerifyRequest(raw, secret) {
		t.Fatal("layeh's Accounting-Request does not verify")
	}
	edited, err := Replace(raw, AttrID{Type: AttrUserName}, 0, []byte("bob"))
	if err != nil {
		t.Fatal(err)
	}
	if VerifyRequest(edited, secret) {
		t.Fatal("an edited accounting request still verifies before signing")
	}
	SignRequest(edited, secret)
	if !radius.IsAuthenticRequest(edited, secret) || !VerifyRequest(edited, secret) {
		t.Fatal("the signed Accounting-Request is not authentic to layeh")
	}

	// An Access-Request with a Message-Authenticator, edited and signed.
	ar := radius.New(radius.CodeAccessRequest, secret)
	rfc2865.UserName_SetString(ar, "carol")
	ar.Add(AttrMessageAuthenticator, make([]byte, 16))
	raw, _ = ar.Encode()
	edited, _ = Insert(raw, AttrID{Type: AttrCallingStationID}, 0, []byte("02-00-00-00-00-01"))
	SignRequest(edited, secret)
	if !bytes.Equal(edited[4:20], raw[4:20]) {
		t.Fatal("an Access-Request's random authenticator changed")
	}
	if !messageAuthOK(edited, Authenticator(edited), secret) {
		t.Fatal("the Access-Request's Message-Authenticator is wrong")
	}

	// A response to it, edited and signed with the request's authenticator.
	resp := ar.Response(radius.CodeAccessAccept)
	rfc2865.ReplyMessage_SetString(resp, "hello")
	resp.Add(AttrMessageAuthenticator, make([]byte, 16))
	rraw, _ := resp.Encode()
	redit, _ := Replace(rraw, AttrID{Type: 18}, 0, []byte("rewritten"))
	SignResponse(redit, Authenticator(raw), secret)
	if !radius.IsAuthenticResponse(redit, raw, secret) {
		t.Fatal("the signed response is not authentic to layeh")
	}
	if !messageAuthOK(redit, Authenticator(raw), secret) {
		t.Fatal("the response's Message-Authenticator is wrong")
	}
}

// messageAuthOK checks b's Message-Authenticator by RFC 3579 §3.2.
func messageAuthOK(b []byte, auth [16]byte, secret []byte) bool {
	v, ok := Attr(b, AttrID{Type: AttrMessageAuthenticator}, 0)
	if !ok {
		return false
	}
	c := append([]byte{}, b...)
	copy(c[4:20], auth[:])
	off := len(b) - len(v) // find its offset in the copy
	for i := HeaderLen; i < len(b); i += int(b[i+1]) {
		if b[i] == AttrMessageAuthenticator {
			off = i + 2
		}
	}
	clear(c[off : off+16])
	h := hmac.New(md5.New, secret)
	h.Write(c)
	return hmac.Equal(h.Sum(nil), v)
}

func TestValues(t *testing.T) {
	for _, c := range []struct {
		in, typ, out string
		bad          bool
	}{
		{"192.0.2.1", TypeIP4, "192.0.2.1", false},
		{"2001:db8::1", TypeIP6, "2001:db8::1", false},
		{"4294967295", TypeInteger, "4294967295", false},
		{"4294967296", TypeInteger, "", true},
		{"x", TypeIP4, "", true},
		{"abc", TypeString, "abc", false},
	} {
		b, err := Encode(c.in, c.typ)
		if (err != nil) != c.bad {
			t.Errorf("Encode(%q, %s) err %v", c.in, c.typ, err)
			continue
		}
		if c.bad {
			continue
		}
		if s, err := Format(b, c.typ); err != nil || s != c.out {
			t.Errorf("Format = %q %v, want %q", s, err, c.out)
		}
	}
	if _, err := Format([]byte{1, 2}, TypeInteger); err == nil {
		t.Error("a 2-byte integer formatted")
	}
	for _, c := range []struct {
		in  string
		t   uint8
		typ string
		bad bool
	}{
		{"31", 31, TypeString, false}, {"Calling-Station-Id", 31, TypeString, false},
		{"nas-ip-address", 4, TypeIP4, false}, {"5", 5, TypeInteger, false},
		{"0", 0, "", true}, {"256", 0, "", true}, {"Bogus", 0, "", true},
	} {
		n, typ, err := ParseAttr(c.in)
		if (err != nil) != c.bad || n != c.t || typ != c.typ {
			t.Errorf("ParseAttr(%q) = %d %s %v", c.in, n, typ, err)
		}
	}
}
