package persist

import "bytes"

// HostKey is host persistence's key in an HTTP request's head: the Host
// header's value, trimmed, or nil when the request has none (an
// HTTP/1.0 client's, which then balances without a record, or goes by
// the fallback persistence). The port stays part of the key [M]: BIG-IP's
// HTTP::host keeps it, and two ports are two sites. Letter case is left
// to the caller, which folds it (host names are case-insensitive).
//
// Only the head is read (up to the first blank line), so a Host line in
// a request's body is not taken for the header.
func HostKey(msg []byte) []byte {
	head := msg
	if i := bytes.Index(head, []byte("\r\n\r\n")); i >= 0 {
		head = head[:i+2]
	}
	// Skip the request line.
	i := bytes.IndexByte(head, '\n')
	if i < 0 {
		return nil
	}
	head = head[i+1:]
	for len(head) > 0 {
		line := head
		if j := bytes.IndexByte(head, '\n'); j >= 0 {
			line, head = head[:j], head[j+1:]
		} else {
			head = nil
		}
		line = bytes.TrimRight(line, "\r")
		if len(line) == 0 {
			break
		}
		if len(line) > 5 && line[4] == ':' && bytes.EqualFold(line[:4], []byte("host")) {
			v := bytes.TrimSpace(line[5:])
			if len(v) == 0 {
				return nil
			}
			return v
		}
	}
	return nil
}
