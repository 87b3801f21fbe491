package diammsg

// AppendAnswer appends to dst the answer a Diameter agent gives request
// req by itself (RFC 6733 6.2): its command, application and both
// identifiers; Session-Id when req has one, Result-Code code, then
// Origin-Host and Origin-Realm (each when set) and extra (AVPs as
// AppendAVP wrote them). A protocol error (3xxx) sets the E flag; the P
// flag follows the request's. The profile's flows and message routing
// answer with it alike.
func AppendAnswer(dst []byte, req Msg, code uint32, host, realm, extra []byte) []byte {
	start := len(dst)
	flags := req.Flags() & FlagProxiable
	if code >= 3000 && code < 4000 {
		flags |= FlagError
	}
	c := req.Code()
	dst = append(dst, 1, 0, 0, 0, flags, byte(c>>16), byte(c>>8), byte(c))
	dst = append(dst, req.Raw[8:HeaderLen]...)
	if sid := req.Get(AVPSessionID); sid != nil {
		dst = AppendAVP(dst, AVPSessionID, AVPFlagMandatory, 0, sid)
	}
	dst = AppendAVP(dst, AVPResultCode, AVPFlagMandatory, 0, u32(code))
	if len(host) > 0 {
		dst = AppendAVP(dst, AVPOriginHost, AVPFlagMandatory, 0, host)
	}
	if len(realm) > 0 {
		dst = AppendAVP(dst, AVPOriginRealm, AVPFlagMandatory, 0, realm)
	}
	dst = append(dst, extra...)
	n := len(dst) - start
	dst[start+1], dst[start+2], dst[start+3] = byte(n>>16), byte(n>>8), byte(n)
	return dst
}

// u32 is U32 without the allocation, for the answers built per message.
func u32(v uint32) []byte {
	return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
}

// Framer cuts a stream into messages on the header's length, as Reader
// does, for a reader that keeps its own buffer (message routing's).
type Framer struct {
	// Max bounds a message's length (0: DefaultMax).
	Max int
}

// Frame is the length of the message at the start of buf: complete when
// buf holds all of it; n 0 while its header's length is not in yet.
func (f *Framer) Frame(buf []byte) (n int, complete bool, err error) {
	if len(buf) < 4 {
		return 0, false, nil
	}
	max := f.Max
	if max <= 0 {
		max = DefaultMax
	}
	n = int(buf[1])<<16 | int(buf[2])<<8 | int(buf[3])
	if buf[0] != 1 || n < HeaderLen || n%4 != 0 {
		return 0, false, &HeaderError{Version: buf[0], Length: n}
	}
	if n > max {
		return 0, false, ErrTooLarge
	}
	return n, len(buf) >= n, nil
}
