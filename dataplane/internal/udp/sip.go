package udp

import (
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/dataplane/sipmsg"
)

// SIP over UDP (the sip profile on a UDP virtual): each datagram is one
// SIP message (RFC 3261 §18.1) and is balanced by itself, as
// datagram-load-balancing does; answers go back to the client the flow
// belongs to. With sip_info persistence a datagram's Call-ID (or the
// profile's sip-info field) picks the member its dialog went to, and
// every datagram refreshes that record. A datagram that is not a SIP
// message (a keep-alive, garbage) goes to no member [M].

// sipChoose readies the flow's persistence for datagram b and returns
// it parsed; false drops the datagram.
func (f *flow) sipChoose(b []byte, sc *config.SIPDatagram) (sipmsg.Message, bool) {
	if sipmsg.IsKeepAlive(b) {
		return sipmsg.Message{}, false
	}
	m, err := sipmsg.Parse(b)
	if err != nil {
		return m, false
	}
	if sc.PersistHeader == "" {
		return m, true
	}
	if f.sipField.IsZero() {
		f.sipField = sipmsg.NewField(sc.PersistHeader)
	}
	v, ok := m.Header(f.sipField)
	if !ok || len(v) == 0 {
		f.persists = false
		return m, true
	}
	prof := f.snap.Cfg.ProfileFor(persist.SIP)
	d := persistDecision{key: persist.StringKey(persist.SIP, string(v)), prof: prof, timeout: config.DefaultPersistTimeout}
	if prof != nil {
		d.timeout = prof.Timeout
	}
	f.persists, f.pers = true, d
	f.persisted = f.persistLookup
	return m, true
}
