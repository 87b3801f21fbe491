package monitor

import (
	"errors"
	"fmt"
	"io"

	"github.com/openltm/openltm/dataplane/diammsg"
)

// The Diameter codes the monitor uses (RFC 6733), from the codec it
// shares with the diameter profile.
const (
	diamCER = diammsg.CmdCapabilitiesExchange
	diamDPR = diammsg.CmdDisconnectPeer

	avpHostIPAddress     = diammsg.AVPHostIPAddress
	avpAuthAppID         = diammsg.AVPAuthAppID
	avpAcctAppID         = diammsg.AVPAcctAppID
	avpVendorSpecificApp = diammsg.AVPVendorSpecificApp
	avpOriginHost        = diammsg.AVPOriginHost
	avpVendorID          = diammsg.AVPVendorID
	avpResultCode        = diammsg.AVPResultCode
	avpProductName       = diammsg.AVPProductName
	avpDisconnectCause   = diammsg.AVPDisconnectCause
	avpErrorMessage      = diammsg.AVPErrorMessage
	avpOriginRealm       = diammsg.AVPOriginRealm

	diamRequest  = diammsg.FlagRequest
	avpMandatory = diammsg.AVPFlagMandatory
	diamSuccess  = diammsg.ResultSuccess
)

// diamResults names the Result-Codes a peer refusing a CER is likely to
// send, for the monitor's error.
var diamResults = diammsg.ResultNames

var (
	appendAVP   = diammsg.AppendAVP
	u32         = diammsg.U32
	diamAddress = diammsg.Address
)

// diamMessage is a message with application id 0 (the base protocol's).
func diamMessage(flags byte, code, hopByHop, endToEnd uint32, avps []byte) []byte {
	return diammsg.Build(flags, code, 0, hopByHop, endToEnd, avps)
}

// diamMsg is a message read: its flags, command, hop-by-hop identifier
// and the AVPs of the base protocol (vendor 0) by code, first of each.
type diamMsg struct {
	flags    byte
	code     uint32
	hopByHop uint32
	avps     map[uint32][]byte
}

// readDiameter reads one message of at most maxReply bytes. r is read
// exactly (a message at a time), so that a later read goes on where this
// one stopped.
func readDiameter(r io.Reader) (*diamMsg, error) {
	rd := diammsg.Reader{R: &exact{r: r}, Max: maxReply}
	raw, err := rd.Next()
	var he *diammsg.HeaderError
	switch {
	case errors.As(err, &he):
		return nil, fmt.Errorf("Response is not a Diameter message (version %d, length %d)", he.Version, he.Length)
	case err == diammsg.ErrTooLarge:
		return nil, errTooLong
	case err != nil:
		return nil, err
	}
	m, err := diammsg.Parse(raw)
	if err != nil {
		return nil, errBadAVP
	}
	d := &diamMsg{flags: m.Flags(), code: m.Code(), hopByHop: m.HopByHop(), avps: map[uint32][]byte{}}
	m.Each(func(a diammsg.AVP) bool {
		if _, seen := d.avps[a.Code]; !seen && a.Vendor == 0 {
			d.avps[a.Code] = a.Data
		}
		return true
	})
	return d, nil
}

var errBadAVP = errors.New("Response is not a Diameter message (an AVP overruns it)")

// exact reads no further than the message in hand: the header first,
// then the rest of the length it announces.
type exact struct {
	r    io.Reader
	want int // bytes of the message still to read; 0: a header is next
	got  int
	head [4]byte
}

func (e *exact) Read(p []byte) (int, error) {
	if e.want == 0 {
		n, err := e.r.Read(p[:min(len(p), 4-e.got)])
		copy(e.head[e.got:], p[:n])
		e.got += n
		if e.got == 4 {
			e.want = int(e.head[1])<<16 | int(e.head[2])<<8 | int(e.head[3]) - 4
			e.got = 0
			if e.want <= 0 {
				e.want = 0
			}
		}
		return n, err
	}
	n, err := e.r.Read(p[:min(len(p), e.want)])
	e.want -= n
	return n, err
}
