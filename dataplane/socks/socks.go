// Package socks is the SOCKS side of a virtual with an ltm profile socks:
// the versions 4, 4A and 5 of the protocol as a forward proxy's clients
// speak them (RFC 1928 and the SOCKS 4 and 4A notes), read off the
// client's connection before any byte goes to a server, and the replies
// that tell the client what became of its CONNECT. The L4 engine
// (dataplane/internal/l4/socks.go) runs the rest: the rules, the
// resolving, the connection and the copy.
package socks

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
)

// Versions is the set of protocol versions a profile accepts
// (protocol-versions), so that a proxy offered to SOCKS 5 clients only
// turns an old client away at its first byte.
type Versions uint8

// The versions of protocol-versions.
const (
	V4 Versions = 1 << iota
	V4A
	V5
)

// ParseVersions reads protocol-versions' words (socks4 socks4a socks5).
func ParseVersions(words []string) (Versions, error) {
	var v Versions
	for _, w := range words {
		switch w {
		case "socks4":
			v |= V4
		case "socks4a":
			v |= V4A
		case "socks5":
			v |= V5
		default:
			return 0, fmt.Errorf("%q is not a SOCKS version (socks4, socks4a, socks5)", w)
		}
	}
	return v, nil
}

// Commands of a request, as RFC 1928 numbers them (SOCKS 4 uses the
// first two alike).
const (
	CmdConnect   = 1
	CmdBind      = 2
	CmdAssociate = 3
)

// Reply codes of RFC 1928 §6. A SOCKS 4 client is told 90 for
// Succeeded and 91 for any other (its protocol has no finer code).
const (
	Succeeded          byte = 0
	GeneralFailure     byte = 1
	NotAllowed         byte = 2
	NetUnreachable     byte = 3
	HostUnreachable    byte = 4
	Refused            byte = 5
	TTLExpired         byte = 6
	CmdNotSupported    byte = 7
	AddrTypeNotSupport byte = 8
)

// Request is a client's request: where it asks to go. Host is the name
// it gave (SOCKS 4A, SOCKS 5's domain name type), to be resolved by the
// proxy; otherwise Addr is the address it gave. Port is the
// destination's port either way.
type Request struct {
	Version int // 4 (4A included) or 5
	Cmd     byte
	Host    string
	Addr    netip.Addr
	Port    uint16
	// User is a SOCKS 4 request's user id (not checked).
	User string
}

// Destination is the request's destination as SOCKS::destination reads
// it: ADDR:PORT, or NAME:PORT before the name is resolved.
func (r *Request) Destination() string {
	if r.Host != "" {
		return r.Host + ":" + strconv.Itoa(int(r.Port))
	}
	return netip.AddrPortFrom(r.Addr, r.Port).String()
}

// Error is a request that is answered before it goes anywhere: the code
// is the reply the client gets (none for a client whose first bytes are
// not SOCKS at all, or whose version the profile does not take: it is
// closed without one).
type Error struct {
	Code    byte
	Version int // 0: no reply
	Msg     string
}

func (e *Error) Error() string { return e.Msg }

// ErrNoAcceptableMethod is a SOCKS 5 client that offered no method the
// proxy takes (only "no authentication" is): it was told so (0xFF) and
// is closed.
var ErrNoAcceptableMethod = errors.New("socks: the client offered no acceptable authentication method")

// maxName bounds a SOCKS 4 user id or SOCKS 4A host name read up to its
// NUL (SOCKS 5 names carry their length, at most 255).
const maxName = 255

// ReadRequest reads a client's negotiation and request from rw, writing
// the SOCKS 5 method selection; the reply to the request is the
// caller's (WriteReply), once it knows what became of it. Only CONNECT
// gets this far: BIND and UDP ASSOCIATE come back as an *Error whose
// reply is "command not supported".
func ReadRequest(rw io.ReadWriter, accept Versions) (*Request, error) {
	var b [262]byte
	if _, err := io.ReadFull(rw, b[:1]); err != nil {
		return nil, err
	}
	switch b[0] {
	case 4:
		if accept&(V4|V4A) == 0 {
			return nil, &Error{Msg: "socks: version 4 is not among the profile's protocol-versions"}
		}
		return read4(rw, accept)
	case 5:
		if accept&V5 == 0 {
			return nil, &Error{Msg: "socks: version 5 is not among the profile's protocol-versions"}
		}
		return read5(rw, b[:])
	}
	return nil, &Error{Msg: fmt.Sprintf("socks: version %d is not SOCKS", b[0])}
}

// read4 reads a SOCKS 4 or 4A request after its version byte.
func read4(r io.Reader, accept Versions) (*Request, error) {
	var h [7]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	req := &Request{Version: 4, Cmd: h[0], Port: binary.BigEndian.Uint16(h[1:3]), Addr: netip.AddrFrom4([4]byte(h[3:7]))}
	user, err := readNUL(r)
	if err != nil {
		return nil, err
	}
	req.User = user
	ip := req.Addr.As4()
	if ip[0] == 0 && ip[1] == 0 && ip[2] == 0 && ip[3] != 0 {
		// SOCKS 4A: the name follows the user id.
		if req.Host, err = readNUL(r); err != nil {
			return nil, err
		}
		if accept&V4A == 0 {
			return nil, &Error{Code: GeneralFailure, Version: 4, Msg: "socks: version 4A is not among the profile's protocol-versions"}
		}
		if req.Host == "" {
			return nil, &Error{Code: GeneralFailure, Version: 4, Msg: "socks: a SOCKS 4A request without a host name"}
		}
		req.Addr = netip.Addr{}
	} else if accept&V4 == 0 {
		return nil, &Error{Code: GeneralFailure, Version: 4, Msg: "socks: version 4 is not among the profile's protocol-versions"}
	}
	if req.Cmd != CmdConnect {
		return nil, &Error{Code: CmdNotSupported, Version: 4, Msg: fmt.Sprintf("socks: command %d is not supported (CONNECT only)", req.Cmd)}
	}
	return req, nil
}

// readNUL reads a NUL-terminated string of at most maxName bytes, one
// byte at a time so that nothing past it is taken from the client.
func readNUL(r io.Reader) (string, error) {
	var buf [maxName]byte
	var c [1]byte
	for n := 0; ; n++ {
		if _, err := io.ReadFull(r, c[:]); err != nil {
			return "", err
		}
		if c[0] == 0 {
			return string(buf[:n]), nil
		}
		if n == maxName {
			return "", &Error{Code: GeneralFailure, Version: 4, Msg: "socks: a SOCKS 4 user id or host name longer than 255 bytes"}
		}
		buf[n] = c[0]
	}
}

// read5 reads a SOCKS 5 greeting, answers it, and reads the request.
func read5(rw io.ReadWriter, b []byte) (*Request, error) {
	if _, err := io.ReadFull(rw, b[:1]); err != nil {
		return nil, err
	}
	n := int(b[0])
	if _, err := io.ReadFull(rw, b[:n]); err != nil {
		return nil, err
	}
	noAuth := false
	for _, m := range b[:n] {
		if m == 0 {
			noAuth = true
		}
	}
	if !noAuth {
		rw.Write([]byte{5, 0xff})
		return nil, ErrNoAcceptableMethod
	}
	if _, err := rw.Write([]byte{5, 0}); err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(rw, b[:4]); err != nil {
		return nil, err
	}
	if b[0] != 5 {
		return nil, &Error{Code: GeneralFailure, Version: 5, Msg: fmt.Sprintf("socks: a request of version %d after a SOCKS 5 greeting", b[0])}
	}
	req := &Request{Version: 5, Cmd: b[1]}
	switch atyp := b[3]; atyp {
	case 1, 4:
		l := 4
		if atyp == 4 {
			l = 16
		}
		if _, err := io.ReadFull(rw, b[:l+2]); err != nil {
			return nil, err
		}
		req.Addr, _ = netip.AddrFromSlice(b[:l])
		req.Port = binary.BigEndian.Uint16(b[l : l+2])
	case 3:
		if _, err := io.ReadFull(rw, b[:1]); err != nil {
			return nil, err
		}
		l := int(b[0])
		if _, err := io.ReadFull(rw, b[:l+2]); err != nil {
			return nil, err
		}
		req.Host = string(b[:l])
		req.Port = binary.BigEndian.Uint16(b[l : l+2])
		if req.Host == "" {
			return nil, &Error{Code: GeneralFailure, Version: 5, Msg: "socks: an empty host name"}
		}
		// A name that is an address literal is taken as the address.
		if a, err := netip.ParseAddr(req.Host); err == nil {
			req.Addr, req.Host = a.Unmap(), ""
		}
	default:
		return nil, &Error{Code: AddrTypeNotSupport, Version: 5, Msg: fmt.Sprintf("socks: address type %d is not supported", atyp)}
	}
	if req.Cmd != CmdConnect {
		return nil, &Error{Code: CmdNotSupported, Version: 5, Msg: fmt.Sprintf("socks: command %d is not supported (CONNECT only)", req.Cmd)}
	}
	return req, nil
}

// AppendReply appends the reply of version to a request: code and, for a
// success, the address the proxy's connection is bound to (the address
// the destination sees).
func AppendReply(dst []byte, version int, code byte, bound netip.AddrPort) []byte {
	if version == 4 {
		cd := byte(90)
		if code != Succeeded {
			cd = 91
		}
		var a [4]byte
		if bound.Addr().Is4() {
			a = bound.Addr().As4()
		}
		dst = append(dst, 0, cd)
		dst = binary.BigEndian.AppendUint16(dst, bound.Port())
		return append(dst, a[:]...)
	}
	dst = append(dst, 5, code, 0)
	a := bound.Addr().Unmap()
	switch {
	case a.Is6():
		b := a.As16()
		dst = append(dst, 4)
		dst = append(dst, b[:]...)
	default:
		var b [4]byte
		if a.Is4() {
			b = a.As4()
		}
		dst = append(dst, 1)
		dst = append(dst, b[:]...)
	}
	return binary.BigEndian.AppendUint16(dst, bound.Port())
}

// WriteReply writes the reply AppendReply makes.
func WriteReply(w io.Writer, version int, code byte, bound netip.AddrPort) error {
	_, err := w.Write(AppendReply(make([]byte, 0, 22), version, code, bound))
	return err
}
