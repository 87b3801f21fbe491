package monitor

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The ONC RPC (RFC 5531) and portmapper (RFC 1833, version 2) numbers the
// monitor uses.
const (
	pmapProgram    = 100000
	pmapVersion    = 2
	pmapGetPort    = 3
	rpcNullProc    = 0
	ipprotoTCP     = 6
	ipprotoUDP     = 17
	rpcLastFrag    = 1 << 31
	rpcAccepted    = 0
	rpcProgUnavail = 1
	rpcProgMisver  = 2
)

// rpcCall is a CALL message with AUTH_NONE credentials and verifier; the
// arguments are XDR unsigned ints, all the portmapper's GETPORT takes.
func rpcCall(xid, prog, vers, proc uint32, args ...uint32) []byte {
	var b []byte
	for _, v := range append([]uint32{xid, 0, 2, prog, vers, proc, 0, 0, 0, 0}, args...) {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

// rpcError is a reply that does not accept the call: accepted with
// accept_stat other than SUCCESS, or denied (denied: reject_stat).
type rpcError struct {
	denied    bool
	stat      uint32
	low, high uint32 // the versions served (PROG_MISMATCH, RPC_MISMATCH)
}

func (e *rpcError) Error() string {
	if e.denied {
		if e.stat == 0 {
			return fmt.Sprintf("call denied: RPC version mismatch (serves %d to %d)", e.low, e.high)
		}
		return fmt.Sprintf("call denied: authentication error %d", e.low)
	}
	switch e.stat {
	case rpcProgUnavail:
		return "program unavailable"
	case rpcProgMisver:
		return fmt.Sprintf("program version mismatch (serves %d to %d)", e.low, e.high)
	case 3:
		return "procedure unavailable"
	case 4:
		return "garbage arguments"
	case 5:
		return "system error"
	}
	return fmt.Sprintf("accept status %d", e.stat)
}

var (
	errRPCShort = errors.New("Response is not an RPC reply (too short)")
	// errRPCOther is a reply to another call (another xid), which UDP
	// may deliver late; it is read past.
	errRPCOther = errors.New("reply to another call")
)

// rpcReply reads a REPLY to the call xid: the procedure's results when
// the call was accepted and succeeded, else an *rpcError.
func rpcReply(b []byte, xid uint32) ([]byte, error) {
	word := func(i int) uint32 { return binary.BigEndian.Uint32(b[4*i:]) }
	if len(b) < 12 {
		return nil, errRPCShort
	}
	if word(0) != xid {
		return nil, errRPCOther
	}
	if word(1) != 1 {
		return nil, errors.New("Response is not an RPC reply")
	}
	if word(2) != rpcAccepted {
		e := &rpcError{denied: true}
		if len(b) >= 16 {
			e.stat = word(3)
		}
		if len(b) >= 24 {
			e.low, e.high = word(4), word(5)
		} else if len(b) >= 20 {
			e.low = word(4)
		}
		return nil, e
	}
	// verifier: flavor, length, body (padded to 4)
	if len(b) < 20 {
		return nil, errRPCShort
	}
	vl := int(word(4))
	at := 20 + (vl+3)&^3
	if vl < 0 || at+4 > len(b) {
		return nil, errRPCShort
	}
	stat := binary.BigEndian.Uint32(b[at:])
	rest := b[at+4:]
	if stat == 0 {
		return rest, nil
	}
	e := &rpcError{stat: stat}
	if stat == rpcProgMisver && len(rest) >= 8 {
		e.low, e.high = binary.BigEndian.Uint32(rest), binary.BigEndian.Uint32(rest[4:])
	}
	return nil, e
}
