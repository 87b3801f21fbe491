package authn

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// TACACS is an `ltm auth tacacs` configuration: the client's user name
// and password go to a TACACS+ server (RFC 8907) in an Authentication
// START of type PAP [M: pam_tacplus's default login], over TCP, the
// body obfuscated with the shared secret unless encryption is disabled.
// With a service, an Authorization REQUEST (service=SERVICE, and
// protocol=PROTOCOL when one is set) must pass too, as pam_tacplus asks
// one for its account check.
type TACACS struct {
	// Servers are host:port, tried in order.
	Servers []string
	Secret  []byte
	// Encrypt obfuscates the bodies (encryption enabled, the default).
	Encrypt bool
	// Service and Protocol are the authorization's arguments; no
	// authorization is asked without a service.
	Service, Protocol string
	// UseAll moves on to the next server on a failure too
	// (authentication use-all-servers); otherwise the first server that
	// answers decides (use-first-server).
	UseAll bool
	// Timeout bounds one server's exchange [M: 10 seconds by default,
	// BIG-IP names no setting].
	Timeout time.Duration
}

// TACACS+ values (RFC 8907).
const (
	tacMajor       = 0xc
	tacMinorOne    = 0x1
	tacAuthen      = 0x01
	tacAuthor      = 0x02
	tacUnencrypted = 0x01

	tacActionLogin   = 0x01
	tacTypePAP       = 0x02
	tacServiceLogin  = 0x01
	tacMethodTACACS  = 0x06
	tacAuthenPass    = 0x01
	tacAuthenFail    = 0x02
	tacAuthenError   = 0x07
	tacAuthorPassAdd = 0x01
	tacAuthorPassRep = 0x02
	tacAuthorFail    = 0x10
	tacAuthorError   = 0x11
	tacMaxBody       = 1 << 16
)

// Authenticate implements Backend.
func (tc *TACACS) Authenticate(ctx context.Context, r Request) Result {
	if r.Username == "" || r.Password == "" {
		return Result{Status: Failure, Err: errNoCredentials}
	}
	var last Result
	last.Status = Error
	last.Err = errors.New("no TACACS+ server configured")
	for _, s := range tc.Servers {
		if ctx.Err() != nil {
			last.Err = ctx.Err()
			break
		}
		res := tc.ask(ctx, s, r)
		if res.Status == Success || res.Status == Failure && !tc.UseAll {
			return res
		}
		if res.Status == Failure || last.Status == Error {
			last = res
		}
	}
	return last
}

// ask runs the authentication (and the authorization) with one server.
func (tc *TACACS) ask(ctx context.Context, server string, r Request) Result {
	body := tacAuthenStart(r.Username, r.Password)
	reply, err := tc.exchange(ctx, server, tacAuthen, tacMinorOne, body)
	if err != nil {
		return Result{Status: Error, Err: fmt.Errorf("TACACS+ server %s: %w", server, err)}
	}
	if len(reply) < 6 {
		return Result{Status: Error, Err: fmt.Errorf("TACACS+ server %s: short authentication REPLY", server)}
	}
	msgLen := int(binary.BigEndian.Uint16(reply[2:4]))
	msg := ""
	if 6+msgLen <= len(reply) {
		msg = string(reply[6 : 6+msgLen])
	}
	switch reply[0] {
	case tacAuthenPass:
	case tacAuthenFail:
		return Result{Status: Failure, Err: fmt.Errorf("TACACS+ server %s: authentication failed %s", server, msg)}
	case tacAuthenError:
		return Result{Status: Error, Err: fmt.Errorf("TACACS+ server %s: error %s", server, msg)}
	default:
		return Result{Status: Error, Err: fmt.Errorf("TACACS+ server %s: authentication status %#x not handled", server, reply[0])}
	}
	out := Result{Status: Success, Data: []Attr{{"tacacs:user", r.Username}}}
	if tc.Service == "" {
		return out
	}
	args := []string{"service=" + tc.Service}
	if tc.Protocol != "" {
		args = append(args, "protocol="+tc.Protocol)
	}
	reply, err = tc.exchange(ctx, server, tacAuthor, 0, tacAuthorRequest(r.Username, args))
	if err != nil {
		return Result{Status: Error, Err: fmt.Errorf("TACACS+ server %s: authorization: %w", server, err)}
	}
	if len(reply) < 6 {
		return Result{Status: Error, Err: fmt.Errorf("TACACS+ server %s: short authorization REPLY", server)}
	}
	switch reply[0] {
	case tacAuthorPassAdd, tacAuthorPassRep:
		n := int(reply[1])
		off := 6 + n + int(binary.BigEndian.Uint16(reply[2:4])) + int(binary.BigEndian.Uint16(reply[4:6]))
		for i := 0; i < n && 6+i < len(reply); i++ {
			l := int(reply[6+i])
			if off+l > len(reply) {
				break
			}
			out.Data = append(out.Data, Attr{"tacacs:attr", string(reply[off : off+l])})
			off += l
		}
		return out
	case tacAuthorFail:
		return Result{Status: Failure, Err: fmt.Errorf("TACACS+ server %s: %s is not authorized for service %s", server, r.Username, tc.Service)}
	}
	return Result{Status: Error, Err: fmt.Errorf("TACACS+ server %s: authorization status %#x", server, reply[0])}
}

// tacAuthenStart is a PAP login START's body.
func tacAuthenStart(user, pass string) []byte {
	u, p := clip(user), clip(pass)
	b := []byte{tacActionLogin, 1, tacTypePAP, tacServiceLogin, byte(len(u)), 0, 0, byte(len(p))}
	b = append(b, u...)
	return append(b, p...)
}

// tacAuthorRequest is an Authorization REQUEST's body.
func tacAuthorRequest(user string, args []string) []byte {
	u := clip(user)
	b := []byte{tacMethodTACACS, 1, tacTypePAP, tacServiceLogin, byte(len(u)), 0, 0, byte(len(args))}
	for _, a := range args {
		b = append(b, byte(len(clip(a))))
	}
	b = append(b, u...)
	for _, a := range args {
		b = append(b, clip(a)...)
	}
	return b
}

// clip keeps a field within its one-byte length.
func clip(s string) string {
	if len(s) > 255 {
		return s[:255]
	}
	return s
}

// exchange sends one packet of a new session and reads the server's
// answer's body.
func (tc *TACACS) exchange(ctx context.Context, server string, typ, minor byte, body []byte) ([]byte, error) {
	timeout := tc.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	dl := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	d := net.Dialer{Deadline: dl}
	conn, err := d.DialContext(ctx, "tcp", server)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	var sid [4]byte
	rand.Read(sid[:])
	hdr := TACACSHeader{Version: tacMajor<<4 | minor, Type: typ, Seq: 1, SessionID: binary.BigEndian.Uint32(sid[:])}
	if !tc.Encrypt {
		hdr.Flags = tacUnencrypted
	}
	if _, err := conn.Write(TACACSPacket(hdr, body, tc.Secret)); err != nil {
		return nil, err
	}
	rh, rb, err := ReadTACACS(conn, tc.Secret)
	if err != nil {
		return nil, err
	}
	if rh.SessionID != hdr.SessionID || rh.Seq != 2 || rh.Type != typ {
		return nil, fmt.Errorf("answer out of sequence (session %x seq %d type %d)", rh.SessionID, rh.Seq, rh.Type)
	}
	return rb, nil
}

// TACACSHeader is a TACACS+ packet's header (RFC 8907 section 4.1).
type TACACSHeader struct {
	Version, Type, Seq, Flags byte
	SessionID                 uint32
}

// TACACSPacket is a packet: the header and the body, obfuscated with
// secret unless the header says unencrypted. Exported for the test
// server (authntest), which speaks the other side.
func TACACSPacket(h TACACSHeader, body []byte, secret []byte) []byte {
	b := make([]byte, 12, 12+len(body))
	b[0], b[1], b[2], b[3] = h.Version, h.Type, h.Seq, h.Flags
	binary.BigEndian.PutUint32(b[4:], h.SessionID)
	binary.BigEndian.PutUint32(b[8:], uint32(len(body)))
	b = append(b, body...)
	if h.Flags&tacUnencrypted == 0 {
		tacObfuscate(h, secret, b[12:])
	}
	return b
}

// ReadTACACS reads one packet and gives its header and its clear body.
func ReadTACACS(r io.Reader, secret []byte) (TACACSHeader, []byte, error) {
	var b [12]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return TACACSHeader{}, nil, err
	}
	h := TACACSHeader{Version: b[0], Type: b[1], Seq: b[2], Flags: b[3], SessionID: binary.BigEndian.Uint32(b[4:])}
	if h.Version>>4 != tacMajor {
		return h, nil, fmt.Errorf("not a TACACS+ packet (version %#x)", h.Version)
	}
	n := binary.BigEndian.Uint32(b[8:])
	if n > tacMaxBody {
		return h, nil, fmt.Errorf("TACACS+ body of %d bytes", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return h, nil, err
	}
	if h.Flags&tacUnencrypted == 0 {
		tacObfuscate(h, secret, body)
	}
	return h, body, nil
}

// tacObfuscate XORs body with the pad RFC 8907 section 4.5 makes of
// the session id, the secret, the version and the sequence number.
func tacObfuscate(h TACACSHeader, secret, body []byte) {
	seed := make([]byte, 0, 4+len(secret)+2+md5.Size)
	seed = binary.BigEndian.AppendUint32(seed, h.SessionID)
	seed = append(seed, secret...)
	seed = append(seed, h.Version, h.Seq)
	n := len(seed)
	var pad [md5.Size]byte
	for off := 0; off < len(body); off += md5.Size {
		if off > 0 {
			seed = append(seed[:n], pad[:]...)
		}
		pad = md5.Sum(seed)
		for i := 0; i < md5.Size && off+i < len(body); i++ {
			body[off+i] ^= pad[i]
		}
	}
}
