package sipmsg

import "strconv"

// Helpers the SIP proxies of TCP (mblb) and UDP virtuals share.

// OpensDialog reports a request that opens a dialog: an INVITE,
// SUBSCRIBE or REFER outside one (no To tag; RFC 3261 §12.1, RFC 6665,
// RFC 3515).
func OpensDialog(m *Message) bool {
	return m.Request && IsDialogMethod(m.Method) && !m.HasToTag()
}

// IsDialogMethod reports the methods whose success opens a dialog.
func IsDialogMethod(meth []byte) bool {
	return string(meth) == "INVITE" || string(meth) == "SUBSCRIBE" || string(meth) == "REFER"
}

// ProxyVia is the start of the Via a stateless proxy puts on each request
// it forwards, up to the branch's hash (BranchHash, in base 36, then
// CRLF): user (user-via-header) whole when set, else SIP/2.0/TLS with
// secure or SIP/2.0/TRANSPORT, at host; and mark, the branch's prefix by
// which the proxy knows its own Via in an answer (RFC 3261's magic
// cookie, then a token of salt's).
func ProxyVia(salt uint64, user string, secure bool, transport, host string) (via, mark []byte) {
	mark = append([]byte("z9hG4bKltm"), strconv.FormatUint(salt>>32, 36)...)
	via = append(via, "Via: "...)
	switch {
	case user != "":
		via = append(via, user...)
	case secure:
		via = append(via, "SIP/2.0/TLS "+host...)
	default:
		via = append(via, "SIP/2.0/"+transport+" "+host...)
	}
	via = append(append(append(via, ";branch="...), mark...), '-')
	return via, mark
}

// ProxyRequest is a client's request as a proxy forwards it: its Via
// (via, from ProxyVia, then m's BranchHash under salt) and, when the
// request opens a dialog, rr (its Record-Route) as the first fields,
// appended to dst, and edited true; m.B itself when neither applies. line holds
// the Via line between calls, so that a caller reusing dst and line
// allocates nothing (TCP); a caller that keeps each result passes nil
// for both and gets one exact allocation (UDP: the datagram waits in the
// batch until sent).
func ProxyRequest(dst []byte, line *[]byte, via, rr []byte, salt uint64, m *Message) (out []byte, edited bool) {
	var lines [2][]byte
	n := 0
	if via != nil {
		l := append((*line)[:0], via...)
		l = strconv.AppendUint(l, BranchHash(salt, m), 36)
		*line = append(l, "\r\n"...)
		lines[n] = *line
		n++
	}
	if rr != nil && OpensDialog(m) {
		lines[n] = rr
		n++
	}
	if n == 0 {
		return m.B, false
	}
	if dst == nil {
		dst = make([]byte, 0, len(m.B)+len(lines[0])+len(lines[1]))
	}
	return AppendTop(dst[:0], m.B, lines[:n]...), true
}

// BranchHash is the branch a stateless proxy gives the request it
// forwards (RFC 3261 §16.11): a hash of the request's own top Via (its
// head without one), so that a retransmission, and a CANCEL of an
// INVITE, get the same branch. salt keeps one virtual's branches apart
// from another's. FNV-1a.
func BranchHash(salt uint64, m *Message) uint64 {
	key := m.TopVia()
	if len(key) == 0 {
		key = m.B[:m.HeadEnd]
	}
	h := uint64(14695981039346656037) ^ salt
	for _, c := range key {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// ForgetHalf drops about half the entries of a map: a SIP state's maps
// (transactions, dialogs) are bounded, and Go's iteration order is
// random enough for a bound that is rarely reached.
func ForgetHalf[V any](m map[string]V) {
	n := len(m) / 2
	for k := range m {
		if n == 0 {
			return
		}
		delete(m, k)
		n--
	}
}
