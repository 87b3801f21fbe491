package mrfdiam

import (
	"encoding/binary"

	"github.com/openltm/openltm/dataplane/diammsg"
)

// The Experimental-Result AVP and its code (RFC 6733 7.6, 7.7): the
// result of an answer an application defines.
const (
	avpExperimentalResult     = 297
	avpExperimentalResultCode = 298
)

// Succeeded says whether answer a reports success (a Result-Code, else
// an Experimental-Result-Code, of the 2xxx class), for
// DIAMETER::persist delete-on-success and delete-on-failure [M: an
// answer with neither counts as a success, as it reports no failure].
func (s *Session) Succeeded(a []byte) bool {
	m, err := diammsg.Parse(a)
	if err != nil {
		return false
	}
	code, ok := uint32(0), false
	if rc := m.Get(diammsg.AVPResultCode); len(rc) == 4 {
		code, ok = binary.BigEndian.Uint32(rc), true
	} else if er := m.Get(avpExperimentalResult); er != nil {
		if avps, good := diammsg.Grouped(er); good {
			for _, x := range avps {
				if x.Code == avpExperimentalResultCode && len(x.Data) == 4 {
					code, ok = binary.BigEndian.Uint32(x.Data), true
				}
			}
		}
	}
	return !ok || code >= 2000 && code < 3000
}
