// Package mrfdiam is Diameter over the message-routing framework: the
// Protocol a TCP virtual with an `ltm message-routing diameter profile
// session` and `diameter profile router` gives its router
// (dataplane/mrf). Messages are framed on the header's length
// (dataplane/diammsg). The virtual is the clients' Diameter peer: it
// answers their capabilities exchange (CEA, DIAMETER_SUCCESS, with the
// session profile's origin-host, origin-realm, product-name and
// vendor-id and the applications the client offered), their watchdogs
// (DWA) and disconnects (DPA, then the connection closes). Each new
// connection to a peer starts with the virtual's own CER, and the
// connection is used once the peer's CEA says DIAMETER_SUCCESS; the
// peer's watchdogs and disconnects are answered the same way. A request
// is routed by the router's diameter routes (destination-realm,
// application-id, origin-realm), a rule (MR::message route) or the
// virtual's pool -- but a request whose Destination-Host is the
// Origin-Host a peer gave in its CEA goes on that peer's open connection
// first -- with a hop-by-hop identifier of the peer connection's
// (clients sharing the connection may have chosen the same one), the
// answer matched back by it and given the client's identifier again.
// origin-host-rewrite and origin-realm-rewrite replace those AVPs in
// every message the virtual forwards, dest-host-rewrite and
// dest-realm-rewrite in the requests. A request no peer takes is
// answered DIAMETER_UNABLE_TO_DELIVER (3002, E flag) from the virtual's
// identity, as RFC 6733 6.1.8 has an agent do (respond-unroutable; else
// dropped). The virtual watches its peer connections as RFC 3539 has a
// peer do: one it has heard nothing on for watchdog-timeout is sent the
// virtual's DWR (Watchdog; the router closes it after
// max-watchdog-failures unanswered ones). persist-type avp persists a
// request by its persist-avp (PersistKey, Session-Id by default), and an
// answer whose Result-Code is one of array-retransmission-result-codes
// sends its request to another peer (RetryOn).
//
// With dynamic-route-insertion a client's CER makes its connection a
// route by its Origin-Host and Origin-Realm, and with
// dynamic-route-lookup a request naming that host (else that realm) goes
// to the client over its own connection first (dynamic.go,
// mrf.DynamicRouter). A peer's DPR holds its pool member as
// disconnect-peer-action says, and the message rate limits shed a
// connection's requests past them (overload.go). loop-detection adds
// Route-Records and refuses a request that already passed (loop.go).
// DIAMETER::persist's delete actions judge an answer by its result
// (persist.go, Succeeded).
package mrfdiam

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/diammsg"
	"github.com/openltm/openltm/dataplane/mrf"
)

// Session is a virtual's diameter session profile, as its router
// applies it; it is the virtual's mrf.Protocol.
type Session struct {
	// OriginHost and OriginRealm are the virtual's identity in the
	// messages it makes (CER, CEA, DWA, its error answers).
	OriginHost, OriginRealm string
	// The rewrites of forwarded messages ("": none).
	OriginHostRewrite, OriginRealmRewrite string
	DestHostRewrite, DestRealmRewrite     string
	ProductName                           string
	VendorID                              uint32
	// AuthApps and AcctApps are the applications the virtual offers in
	// its own CER (none: the relay application, 0xffffffff).
	AuthApps, AcctApps []uint32
	// Max is max-message-size (0: diammsg's bound).
	Max int
	// HostIP is the virtual's address, the Host-IP-Address of its CEA.
	HostIP netip.Addr
	// NoHostIP is host-ip-address disabled: the virtual's CER and CEA
	// carry no Host-IP-Address.
	NoHostIP bool
	// LoopDetect is loop-detection: each forwarded request gets the
	// Route-Record of the peer it came from, and a request carrying the
	// virtual's own origin-host in one is answered
	// DIAMETER_LOOP_DETECTED (loop.go).
	LoopDetect bool
	// Respond is respond-unroutable: a request no peer takes is
	// answered (else dropped).
	Respond bool
	// RetryCodes are array-retransmission-result-codes: an answer with
	// one of these Result-Codes sends its request to another peer (with
	// retransmission-action retransmit) rather than back to the client.
	RetryCodes []uint32
	// PersistAVP is the AVP a request is persisted by (persist-type
	// avp: persist-avp's code; 0: Session-Id), for mrf.PersistAVP.
	PersistAVP uint32
	// DynInsert, DynLookup and DynTTL are dynamic-route-insertion,
	// dynamic-route-lookup and dynamic-route-timeout: a client's CER
	// makes its connection a route by its Origin-Host and Origin-Realm,
	// and requests naming them go there first (mrf.DynamicRouter).
	DynInsert, DynLookup bool
	DynTTL               time.Duration
	// OnDisconnect is disconnect-peer-action: what becomes of a peer's
	// pool member once the peer sends a DPR (mrf.PeerLeaver).
	OnDisconnect mrf.LeaveAction
	// Ingress and Egress are the ingress- and egress-major- and
	// -critical-message-rate-limit: requests a second per client
	// connection and per peer connection (mrf.RateLimiter).
	Ingress, Egress mrf.RateLimits

	e2e atomic.Uint32
}

// Name is the protocol's name to MR::protocol.
func (s *Session) Name() string { return "diameter" }

func (s *Session) String() string {
	return fmt.Sprintf("%q %q %q %q %q %q %q %d %v %v %d %v %t %d %v %t %t %d", s.OriginHost, s.OriginRealm, s.OriginHostRewrite, s.OriginRealmRewrite,
		s.DestHostRewrite, s.DestRealmRewrite, s.ProductName, s.VendorID, s.AuthApps, s.AcctApps, s.Max, s.HostIP, s.Respond, s.PersistAVP, s.RetryCodes,
		s.DynInsert, s.DynLookup, s.DynTTL) + fmt.Sprintf(" %d %v %v %t %t", s.OnDisconnect, s.Ingress, s.Egress, s.NoHostIP, s.LoopDetect)
}

// NewFramer frames on the header's length.
func (s *Session) NewFramer() mrf.Framer { return &diammsg.Framer{Max: s.Max} }

// Classify: a request wants an answer; an answer is matched by its
// hop-by-hop identifier.
func (s *Session) Classify(data []byte) mrf.Class {
	m, err := diammsg.Parse(data)
	if err != nil {
		return mrf.Class{Bad: true}
	}
	if m.Request() {
		return mrf.Class{}
	}
	return mrf.Class{Answer: true, Final: true, Key: uint64(m.HopByHop())}
}

// Local answers capabilities exchanges, watchdogs and disconnects, and
// takes a peer's answers to them.
func (s *Session) Local(dst, data []byte, fromPeer bool) ([]byte, bool, bool) {
	m, err := diammsg.Parse(data)
	if err != nil {
		return nil, false, false
	}
	switch m.Code() {
	case diammsg.CmdCapabilitiesExchange, diammsg.CmdDeviceWatchdog, diammsg.CmdDisconnectPeer:
	default:
		if s.LoopDetect && m.Request() && s.looped(m) {
			return diammsg.AppendAnswer(dst, m, resultLoopDetected, []byte(s.OriginHost), []byte(s.OriginRealm), nil), true, false
		}
		return nil, false, false
	}
	if !m.Request() {
		return nil, true, false // the answer to the virtual's own
	}
	host, realm := []byte(s.OriginHost), []byte(s.OriginRealm)
	switch m.Code() {
	case diammsg.CmdCapabilitiesExchange:
		if fromPeer {
			return nil, true, true // a peer may not exchange capabilities again
		}
		return diammsg.AppendAnswer(dst, m, diammsg.ResultSuccess, host, realm, s.capabilities(nil, m, s.HostIP)), true, false
	case diammsg.CmdDisconnectPeer:
		return diammsg.AppendAnswer(dst, m, diammsg.ResultSuccess, host, realm, nil), true, true
	}
	return diammsg.AppendAnswer(dst, m, diammsg.ResultSuccess, host, realm, nil), true, false
}

// capabilities are the AVPs of the virtual's CER or CEA after its
// identity: Host-IP-Address (local, when valid), Vendor-Id,
// Product-Name, then the applications: the CER's own (the CEA to a
// client: the applications it offered, the virtual relaying them all),
// else the profile's, else the relay application.
func (s *Session) capabilities(dst []byte, cer diammsg.Msg, local netip.Addr) []byte {
	if local.IsValid() && !s.NoHostIP {
		dst = diammsg.AppendAVP(dst, diammsg.AVPHostIPAddress, diammsg.AVPFlagMandatory, 0, diammsg.Address(local))
	}
	dst = diammsg.AppendAVP(dst, diammsg.AVPVendorID, diammsg.AVPFlagMandatory, 0, diammsg.U32(s.VendorID))
	dst = diammsg.AppendAVP(dst, diammsg.AVPProductName, 0, 0, []byte(s.ProductName))
	apps := 0
	if cer.Raw != nil {
		cer.Each(func(a diammsg.AVP) bool {
			switch a.Code {
			case diammsg.AVPAuthAppID, diammsg.AVPAcctAppID, diammsg.AVPVendorSpecificApp:
				dst = diammsg.AppendAVP(dst, a.Code, a.Flags, a.Vendor, a.Data)
				apps++
			}
			return true
		})
	}
	if apps == 0 {
		for _, id := range s.AuthApps {
			dst = diammsg.AppendAVP(dst, diammsg.AVPAuthAppID, diammsg.AVPFlagMandatory, 0, diammsg.U32(id))
			apps++
		}
		for _, id := range s.AcctApps {
			dst = diammsg.AppendAVP(dst, diammsg.AVPAcctAppID, diammsg.AVPFlagMandatory, 0, diammsg.U32(id))
			apps++
		}
	}
	if apps == 0 {
		dst = diammsg.AppendAVP(dst, diammsg.AVPAuthAppID, diammsg.AVPFlagMandatory, 0, diammsg.U32(0xffffffff))
	}
	return dst
}

// Route fields: origin-realm, application-id, destination-realm, most
// specific last [M: F5 documents the fields, not their precedence].
const (
	KeyOriginRealm = iota
	KeyApp
	KeyDestRealm
)

// RouteKeys are a request's Origin-Realm, application id and
// Destination-Realm (views of its bytes).
func (s *Session) RouteKeys(msg *mrf.Message) mrf.RouteKeys {
	var k mrf.RouteKeys
	m, err := diammsg.Parse(msg.Data)
	if err != nil {
		return k
	}
	k[KeyOriginRealm] = mrf.BytesKey(m.Get(diammsg.AVPOriginRealm))
	k[KeyApp] = strconv.FormatUint(uint64(m.AppID()), 10)
	k[KeyDestRealm] = mrf.BytesKey(m.Get(diammsg.AVPDestinationRealm))
	return k
}

// MatchKey compares realms without case (DiameterIdentity is a domain
// name), application ids as numbers.
func (s *Session) MatchKey(i int, route, msg string) bool {
	if i == KeyApp {
		a, err1 := strconv.ParseUint(route, 10, 32)
		b, err2 := strconv.ParseUint(msg, 10, 32)
		return err1 == nil && err2 == nil && a == b
	}
	return strings.EqualFold(route, msg)
}

// Outbound is a message as it leaves for a peer: the connection's
// hop-by-hop identifier (a request's), the profile's rewrites.
func (s *Session) Outbound(bufs *[2][]byte, msg *mrf.Message, seq uint64) ([]byte, uint64) {
	m, err := diammsg.Parse(msg.Data)
	if err != nil {
		return append(bufs[0][:0], msg.Data...), 0
	}
	from := m
	i := 0
	set := func(code uint32, v string) {
		if v == "" {
			return
		}
		bufs[i] = m.Set(bufs[i][:0], code, []byte(v))
		m = diammsg.Msg{Raw: bufs[i]}
		i ^= 1
	}
	set(diammsg.AVPOriginHost, s.OriginHostRewrite)
	set(diammsg.AVPOriginRealm, s.OriginRealmRewrite)
	if m.Request() {
		if s.DestHostRewrite != "" && m.Get(diammsg.AVPDestinationHost) != nil {
			set(diammsg.AVPDestinationHost, s.DestHostRewrite)
		}
		set(diammsg.AVPDestinationRealm, s.DestRealmRewrite)
		if s.LoopDetect {
			m, i = s.routeRecord(bufs, i, m, from)
		}
	}
	if &m.Raw[0] == &msg.Data[0] { // no rewrite: a copy, for the new identifier
		bufs[i] = append(bufs[i][:0], m.Raw...)
		m = diammsg.Msg{Raw: bufs[i]}
	}
	key := uint32(seq)
	if m.Request() {
		m.SetHopByHop(key)
	}
	return m.Raw, uint64(key)
}

// Inbound gives the answer the client's hop-by-hop identifier again, and
// the profile's origin rewrites.
func (s *Session) Inbound(a *mrf.Message, req *mrf.Message) {
	if len(a.Data) >= diammsg.HeaderLen && len(req.Data) >= diammsg.HeaderLen {
		copy(a.Data[12:16], req.Data[12:16])
	}
	if s.OriginHostRewrite == "" && s.OriginRealmRewrite == "" {
		return
	}
	m, err := diammsg.Parse(a.Data)
	if err != nil {
		return
	}
	if s.OriginHostRewrite != "" {
		m = diammsg.Msg{Raw: m.Set(nil, diammsg.AVPOriginHost, []byte(s.OriginHostRewrite))}
	}
	if s.OriginRealmRewrite != "" {
		m = diammsg.Msg{Raw: m.Set(nil, diammsg.AVPOriginRealm, []byte(s.OriginRealmRewrite))}
	}
	a.Data = m.Raw
}

// ErrRefused is a peer whose CEA does not say DIAMETER_SUCCESS.
var ErrRefused = errors.New("diameter peer refused the capabilities exchange")

// Open sends the virtual's CER and waits for the peer's CEA.
func (s *Session) Open(c net.Conn, rd *mrf.Reader) error {
	_, err := s.OpenHost(c, rd)
	return err
}

// DestHost is a request's Destination-Host: it goes to the peer whose
// CEA gave that Origin-Host when a connection to it is open.
func (s *Session) DestHost(data []byte) []byte {
	m, err := diammsg.Parse(data)
	if err != nil || !m.Request() {
		return nil
	}
	return m.Get(diammsg.AVPDestinationHost)
}

// OpenHost is Open, and the Origin-Host of the peer's CEA (lower case:
// a DiameterIdentity is a domain name).
func (s *Session) OpenHost(c net.Conn, rd *mrf.Reader) (string, error) {
	var b []byte
	b = diammsg.AppendAVP(b, diammsg.AVPOriginHost, diammsg.AVPFlagMandatory, 0, []byte(s.OriginHost))
	b = diammsg.AppendAVP(b, diammsg.AVPOriginRealm, diammsg.AVPFlagMandatory, 0, []byte(s.OriginRealm))
	local := s.HostIP
	if ta, ok := c.LocalAddr().(*net.TCPAddr); ok {
		local = ta.AddrPort().Addr()
	}
	b = s.capabilities(b, diammsg.Msg{}, local)
	hbh := s.e2e.Add(1)
	cer := diammsg.Build(diammsg.FlagRequest, diammsg.CmdCapabilitiesExchange, 0, hbh, hbh, b)
	if _, err := c.Write(cer); err != nil {
		return "", err
	}
	for range 16 {
		data, err := rd.Next()
		if err != nil {
			return "", err
		}
		m, err := diammsg.Parse(data)
		if err != nil {
			return "", err
		}
		if m.Code() != diammsg.CmdCapabilitiesExchange || m.Request() {
			continue // [M: nothing else is taken before the CEA]
		}
		if rc := m.Get(diammsg.AVPResultCode); len(rc) != 4 || binary.BigEndian.Uint32(rc) != diammsg.ResultSuccess {
			return "", ErrRefused
		}
		return strings.ToLower(string(m.Get(diammsg.AVPOriginHost))), nil
	}
	return "", ErrRefused
}

// LostAnswer is DIAMETER_TOO_BUSY (busy) or DIAMETER_UNABLE_TO_DELIVER
// from the virtual's identity, for a request whose peer connection
// closed before its answer (retransmission-action busy or unable).
func (s *Session) LostAnswer(msg *mrf.Message, busy bool) []byte {
	m, err := diammsg.Parse(msg.Data)
	if err != nil || !m.Request() {
		return nil
	}
	code := uint32(diammsg.ResultUnableToDeliver)
	if busy {
		code = diammsg.ResultTooBusy
	}
	return diammsg.AppendAnswer(nil, m, code, []byte(s.OriginHost), []byte(s.OriginRealm), nil)
}

// Failed is DIAMETER_UNABLE_TO_DELIVER from the virtual's identity.
func (s *Session) Failed(msg *mrf.Message) []byte {
	if !s.Respond {
		return nil
	}
	m, err := diammsg.Parse(msg.Data)
	if err != nil || !m.Request() {
		return nil
	}
	return diammsg.AppendAnswer(nil, m, diammsg.ResultUnableToDeliver, []byte(s.OriginHost), []byte(s.OriginRealm), nil)
}

// PersistKey is the value of the request's persist-avp (Session-Id by
// default): the requests of one Diameter session go to the peer
// connection its first went on.
func (s *Session) PersistKey(data []byte) []byte {
	m, err := diammsg.Parse(data)
	if err != nil || !m.Request() {
		return nil
	}
	code := s.PersistAVP
	if code == 0 {
		code = diammsg.AVPSessionID
	}
	return m.Get(code)
}

// Watchdog is the virtual's Device-Watchdog-Request (RFC 6733 5.5.1) to
// a peer connection it has heard nothing from for watchdog-timeout: its
// identity, no Origin-State-Id. The peer's DWA is taken by Local.
func (s *Session) Watchdog(dst []byte) []byte {
	hbh := s.e2e.Add(1)
	code := uint32(diammsg.CmdDeviceWatchdog)
	dst = append(dst, 1, 0, 0, 0, diammsg.FlagRequest, byte(code>>16), byte(code>>8), byte(code), 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, hbh)
	dst = binary.BigEndian.AppendUint32(dst, hbh)
	start := len(dst) - diammsg.HeaderLen
	dst = diammsg.AppendAVP(dst, diammsg.AVPOriginHost, diammsg.AVPFlagMandatory, 0, []byte(s.OriginHost))
	dst = diammsg.AppendAVP(dst, diammsg.AVPOriginRealm, diammsg.AVPFlagMandatory, 0, []byte(s.OriginRealm))
	n := len(dst) - start
	dst[start+1], dst[start+2], dst[start+3] = byte(n>>16), byte(n>>8), byte(n)
	return dst
}

// RetryOn says whether answer a's Result-Code is one of
// array-retransmission-result-codes (a peer too busy, say), so that its
// request goes to another peer.
func (s *Session) RetryOn(a []byte) bool {
	if len(s.RetryCodes) == 0 {
		return false
	}
	m, err := diammsg.Parse(a)
	if err != nil {
		return false
	}
	rc := m.Get(diammsg.AVPResultCode)
	if len(rc) != 4 {
		return false
	}
	return slices.Contains(s.RetryCodes, binary.BigEndian.Uint32(rc))
}
