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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// TACACS is an `ltm auth tacacs` configuration: the client's user name
// and password go to a TACACS+ server (RFC 8907) in an Authentication
// START of type PAP [M: pam_tacplus's default login, which BIG-IP's
// PAM stack sends; BIG-IP names no setting for the type], over TCP, the
// body obfuscated with the shared secret unless encryption is disabled.
// A server that does not take PAP answers RESTART with the types it
// takes: the login starts over as an ASCII login (the server asks for
// the user and the password, GETUSER and GETPASS, and they are given)
// or as a CHAP login (the response to a challenge of openltm's,
// computed from the password), whichever the server lists first
// [M: ASCII when it lists none]. With a service, an Authorization
// REQUEST (service=SERVICE, and protocol=PROTOCOL when one is set) must
// pass too, as pam_tacplus asks one for its account check.
//
// A session it let in is accounted for (AccountStart): a START record
// when the session begins and a STOP record when it ends, as
// pam_tacplus's session management sends them, to the first server that
// takes it (accounting send-to-first-server) or to every server
// (send-to-all-servers).
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
	// Account sends the accounting records; AcctAll sends them to every
	// server (accounting send-to-all-servers) rather than to the first
	// that takes them.
	Account, AcctAll bool
	// Timeout bounds one server's exchange [M: 10 seconds by default,
	// BIG-IP names no setting].
	Timeout time.Duration
	// Log, when set, is told of the accounting records a server did not
	// take: they are sent behind the connections' backs, so no rule
	// sees their errors.
	Log func(string)
}

// TACACS+ values (RFC 8907).
const (
	tacMajor       = 0xc
	tacMinorOne    = 0x1
	tacAuthen      = 0x01
	tacAuthor      = 0x02
	tacAcct        = 0x03
	tacUnencrypted = 0x01

	tacActionLogin    = 0x01
	tacTypeASCII      = 0x01
	tacTypePAP        = 0x02
	tacTypeCHAP       = 0x03
	tacServiceLogin   = 0x01
	tacMethodTACACS   = 0x06
	tacAuthenPass     = 0x01
	tacAuthenFail     = 0x02
	tacAuthenGetData  = 0x03
	tacAuthenGetUser  = 0x04
	tacAuthenGetPass  = 0x05
	tacAuthenRestart  = 0x06
	tacAuthenError    = 0x07
	tacAuthenFollow   = 0x21
	tacContinueAbort  = 0x01
	tacAuthorPassAdd  = 0x01
	tacAuthorPassRep  = 0x02
	tacAuthorFail     = 0x10
	tacAuthorError    = 0x11
	tacAcctFlagStart  = 0x02
	tacAcctFlagStop   = 0x04
	tacAcctSuccess    = 0x01
	tacMaxBody        = 1 << 16
	tacMaxASCIIRounds = 8
)

// tacTypeNames are the login types openltm speaks, as AUTH::response_data
// gives the one used (tacacs:authen_type).
var tacTypeNames = map[byte]string{tacTypeASCII: "ascii", tacTypePAP: "pap", tacTypeCHAP: "chap"}

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

// ask runs the login (PAP, then the type a RESTART asks for) and the
// authorization with one server.
func (tc *TACACS) ask(ctx context.Context, server string, r Request) Result {
	typ := byte(tacTypePAP)
	tried := map[byte]bool{}
	var reply []byte
	for {
		tried[typ] = true
		var err error
		reply, err = tc.login(ctx, server, typ, r)
		if err != nil {
			return Result{Status: Error, Err: fmt.Errorf("TACACS+ server %s: %s login: %w", server, tacTypeNames[typ], err)}
		}
		if reply[0] != tacAuthenRestart {
			break
		}
		next := byte(0)
		for _, t := range reply[6+int(binary.BigEndian.Uint16(reply[2:4])):] {
			if tacTypeNames[t] != "" && !tried[t] {
				next = t
				break
			}
		}
		if len(reply) == 6+int(binary.BigEndian.Uint16(reply[2:4])) && !tried[tacTypeASCII] {
			next = tacTypeASCII
		}
		if next == 0 {
			return Result{Status: Error, Err: fmt.Errorf("TACACS+ server %s: asks to restart the login with a type openltm does not speak (it tried %s)", server, tacTypeList(tried))}
		}
		typ = next
	}
	msgLen := int(binary.BigEndian.Uint16(reply[2:4]))
	msg := ""
	if 6+msgLen <= len(reply) {
		msg = string(reply[6 : 6+msgLen])
	}
	switch reply[0] {
	case tacAuthenPass:
	case tacAuthenFail, tacAuthenFollow:
		// RFC 8907: a client that does not follow treats FOLLOW as FAIL.
		return Result{Status: Failure, Err: fmt.Errorf("TACACS+ server %s: authentication failed %s", server, msg)}
	case tacAuthenError:
		return Result{Status: Error, Err: fmt.Errorf("TACACS+ server %s: error %s", server, msg)}
	default:
		return Result{Status: Error, Err: fmt.Errorf("TACACS+ server %s: authentication status %#x not handled", server, reply[0])}
	}
	out := Result{Status: Success, Data: []Attr{{"tacacs:user", r.Username}, {"tacacs:authen_type", tacTypeNames[typ]}}}
	if tc.Service == "" {
		return out
	}
	args := []string{"service=" + tc.Service}
	if tc.Protocol != "" {
		args = append(args, "protocol="+tc.Protocol)
	}
	c, err := tc.dial(ctx, server, 0)
	if err != nil {
		return Result{Status: Error, Err: fmt.Errorf("TACACS+ server %s: authorization: %w", server, err)}
	}
	defer c.close()
	reply, err = c.roundTrip(tacAuthor, tacAuthorRequest(r.Username, typ, args), 6)
	if err != nil {
		return Result{Status: Error, Err: fmt.Errorf("TACACS+ server %s: authorization: %w", server, err)}
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

// tacTypeList names the types tried, for a message.
func tacTypeList(tried map[byte]bool) string {
	var out []string
	for _, t := range []byte{tacTypePAP, tacTypeASCII, tacTypeCHAP} {
		if tried[t] {
			out = append(out, tacTypeNames[t])
		}
	}
	return strings.Join(out, ", ")
}

// login runs one authentication session of type typ and gives the
// server's last REPLY body (at least 6 bytes): PASS, FAIL, ERROR,
// RESTART or FOLLOW.
func (tc *TACACS) login(ctx context.Context, server string, typ byte, r Request) ([]byte, error) {
	minor := byte(tacMinorOne)
	if typ == tacTypeASCII {
		minor = 0 // RFC 8907: an ASCII login is of minor version 0
	}
	c, err := tc.dial(ctx, server, minor)
	if err != nil {
		return nil, err
	}
	defer c.close()
	var data []byte
	switch typ {
	case tacTypePAP:
		data = []byte(clip(r.Password))
	case tacTypeCHAP:
		// data: the PPP id, the challenge, then the response
		// MD5(id, password, challenge) (RFC 1994, RFC 8907 5.4.2.3).
		var ch [17]byte
		rand.Read(ch[:])
		h := md5.New()
		h.Write(ch[:1])
		h.Write([]byte(r.Password))
		h.Write(ch[1:])
		data = h.Sum(ch[:])
	}
	reply, err := c.roundTrip(tacAuthen, tacAuthenStart(r.Username, typ, data), 6)
	for round := 0; err == nil && round < tacMaxASCIIRounds; round++ {
		if err := tacAuthenReplyOK(reply); err != nil {
			return nil, err
		}
		var answer string
		switch reply[0] {
		case tacAuthenGetUser:
			answer = r.Username
		case tacAuthenGetPass:
			answer = r.Password
		case tacAuthenGetData:
			// [M] openltm has nothing but the user name and the
			// password to give: the login is abandoned.
			c.send(tacAuthen, tacAuthenContinue("", tacContinueAbort))
			return nil, errors.New("the server asks for data other than the user name and the password")
		default:
			return reply, nil
		}
		if typ != tacTypeASCII {
			return nil, fmt.Errorf("the server asks for more (status %#x) in a %s login", reply[0], tacTypeNames[typ])
		}
		reply, err = c.roundTrip(tacAuthen, tacAuthenContinue(answer, 0), 6)
	}
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("the server asks for more than %d answers", tacMaxASCIIRounds)
}

// tacAuthenReplyOK checks a REPLY's lengths.
func tacAuthenReplyOK(b []byte) error {
	if 6+int(binary.BigEndian.Uint16(b[2:4]))+int(binary.BigEndian.Uint16(b[4:6])) > len(b) {
		return errors.New("authentication REPLY shorter than its fields")
	}
	return nil
}

// tacAuthenStart is a login START's body: the user, and the data its
// type carries (the password for PAP, the challenge and response for
// CHAP, none for ASCII).
func tacAuthenStart(user string, typ byte, data []byte) []byte {
	u := clip(user)
	b := []byte{tacActionLogin, 1, typ, tacServiceLogin, byte(len(u)), 0, 0, byte(len(data))}
	b = append(b, u...)
	return append(b, data...)
}

// tacAuthenContinue is a CONTINUE's body: the answer to GETUSER or
// GETPASS, or an abort.
func tacAuthenContinue(msg string, flags byte) []byte {
	m := msg
	if len(m) > 0xffff {
		m = m[:0xffff]
	}
	b := binary.BigEndian.AppendUint16(nil, uint16(len(m)))
	b = append(b, 0, 0, flags)
	return append(b, m...)
}

// tacAuthorRequest is an Authorization REQUEST's body.
func tacAuthorRequest(user string, typ byte, args []string) []byte {
	u := clip(user)
	b := []byte{tacMethodTACACS, 1, typ, tacServiceLogin, byte(len(u)), 0, 0, byte(len(args))}
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

// tacConn is one TACACS+ session on a connection of its own: its id,
// version and the sequence number last used.
type tacConn struct {
	conn    net.Conn
	stop    func() bool
	secret  []byte
	encrypt bool
	version byte
	sid     uint32
	seq     byte
}

// dial connects to server for a new session of the given minor
// version; the connection's deadline is the exchange's timeout (or
// ctx's, when sooner), and ctx's end ends it.
func (tc *TACACS) dial(ctx context.Context, server string, minor byte) (*tacConn, error) {
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
	conn.SetDeadline(dl)
	c := &tacConn{conn: conn, secret: tc.Secret, encrypt: tc.Encrypt, version: tacMajor<<4 | minor}
	c.stop = context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	var sid [4]byte
	rand.Read(sid[:])
	c.sid = binary.BigEndian.Uint32(sid[:])
	return c, nil
}

func (c *tacConn) close() {
	c.stop()
	c.conn.Close()
}

// send writes the session's next packet.
func (c *tacConn) send(typ byte, body []byte) error {
	c.seq++
	hdr := TACACSHeader{Version: c.version, Type: typ, Seq: c.seq, SessionID: c.sid}
	if !c.encrypt {
		hdr.Flags = tacUnencrypted
	}
	_, err := c.conn.Write(TACACSPacket(hdr, body, c.secret))
	return err
}

// roundTrip sends a packet and reads the server's answer's body, which
// must hold at least min bytes.
func (c *tacConn) roundTrip(typ byte, body []byte, min int) ([]byte, error) {
	if err := c.send(typ, body); err != nil {
		return nil, err
	}
	rh, rb, err := ReadTACACS(c.conn, c.secret)
	if err != nil {
		return nil, err
	}
	if rh.SessionID != c.sid || rh.Seq != c.seq+1 || rh.Type != typ {
		return nil, fmt.Errorf("answer out of sequence (session %x seq %d type %d)", rh.SessionID, rh.Seq, rh.Type)
	}
	c.seq = rh.Seq
	if len(rb) < min {
		return nil, fmt.Errorf("short answer (%d bytes)", len(rb))
	}
	return rb, nil
}

// acctSeq numbers the accounting sessions (task_id).
var acctSeq atomic.Uint64

// AccountStart implements Accounter: the START record goes out at once,
// on a goroutine of its own; stop sends the STOP record once the START
// is out (or given up), on one of its own too. Neither waits for the
// servers.
func (tc *TACACS) AccountStart(s AcctSession) (stop func()) {
	if !tc.Account {
		return nil
	}
	task := strconv.FormatUint(acctSeq.Add(1), 10)
	start := time.Now()
	typ := byte(tacTypePAP)
	for _, a := range s.Data {
		if a.Name == "tacacs:authen_type" {
			for t, n := range tacTypeNames {
				if n == a.Value {
					typ = t
				}
			}
		}
	}
	started := make(chan struct{})
	go func() {
		defer close(started)
		tc.account(tacAcctFlagStart, typ, s, []string{"task_id=" + task, "start_time=" + strconv.FormatInt(start.Unix(), 10)})
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			end := time.Now()
			go func() {
				<-started
				tc.account(tacAcctFlagStop, typ, s, []string{"task_id=" + task, "stop_time=" + strconv.FormatInt(end.Unix(), 10),
					"elapsed_time=" + strconv.FormatInt(int64(end.Sub(start)/time.Second), 10)})
			}()
		})
	}
}

// account sends one record to the first server that takes it, or to
// all of them.
func (tc *TACACS) account(flags, typ byte, s AcctSession, args []string) {
	args = append(args, "service="+tc.Service)
	if tc.Protocol != "" {
		args = append(args, "protocol="+tc.Protocol)
	}
	body := tacAcctRequest(flags, typ, s, args)
	for _, server := range tc.Servers {
		err := tc.acctOne(server, body)
		if err == nil && !tc.AcctAll {
			return
		}
		if err != nil && tc.Log != nil {
			tc.Log(fmt.Sprintf("TACACS+ server %s: accounting %s for %s: %v", server, map[byte]string{tacAcctFlagStart: "start", tacAcctFlagStop: "stop"}[flags], s.User, err))
		}
	}
}

// acctOne sends one accounting REQUEST to one server.
func (tc *TACACS) acctOne(server string, body []byte) error {
	c, err := tc.dial(context.Background(), server, 0)
	if err != nil {
		return err
	}
	defer c.close()
	reply, err := c.roundTrip(tacAcct, body, 5)
	if err != nil {
		return err
	}
	if reply[4] != tacAcctSuccess {
		return fmt.Errorf("status %#x", reply[4])
	}
	return nil
}

// tacAcctRequest is an Accounting REQUEST's body.
func tacAcctRequest(flags, typ byte, s AcctSession, args []string) []byte {
	u, p, ra := clip(s.User), clip(s.Port), clip(s.Remote)
	b := []byte{flags, tacMethodTACACS, 1, typ, tacServiceLogin, byte(len(u)), byte(len(p)), byte(len(ra)), byte(len(args))}
	for _, a := range args {
		b = append(b, byte(len(clip(a))))
	}
	b = append(b, u...)
	b = append(b, p...)
	b = append(b, ra...)
	for _, a := range args {
		b = append(b, clip(a)...)
	}
	return b
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
