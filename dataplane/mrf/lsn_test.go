package mrf

import (
	"net/netip"
	"testing"
)

// TestLSNVia: which lsn pool a new peer connection translates through
// and for which subscriber: a rule's snat wins, then the
// transport-config's own source-address-translation (type lsn: its pool;
// automap or snat: none), then the virtual's pool; the subscriber is the
// client whose message opens the connection, else the virtual's address.
func TestLSNVia(t *testing.T) {
	local := netip.MustParseAddr("127.216.0.1")
	client := netip.MustParseAddrPort("127.216.1.1:40000")
	dst := netip.MustParseAddr("127.216.0.100")
	for _, tc := range []struct {
		name    string
		virtual string // Config.LSN
		tc      *Transport
		snat    netip.Addr // MR::message snat
		automap bool
		session bool // a client session with its subscriber
		pool    string
		sub     netip.AddrPort
	}{
		{name: "none anywhere"},
		{name: "the virtual's", virtual: "/Common/va", session: true, pool: "/Common/va", sub: client},
		{name: "no client: the virtual's address", virtual: "/Common/va", pool: "/Common/va", sub: netip.AddrPortFrom(local, 0)},
		{name: "a transport-config without its own", virtual: "/Common/va", tc: &Transport{}, session: true, pool: "/Common/va", sub: client},
		{name: "the transport-config's lsn", virtual: "/Common/va", tc: &Transport{SNAT: SNATLSN, LSN: "/Common/tb"}, session: true, pool: "/Common/tb", sub: client},
		{name: "the transport-config's lsn alone", tc: &Transport{SNAT: SNATLSN, LSN: "/Common/tb"}, session: true, pool: "/Common/tb", sub: client},
		{name: "the transport-config's automap", virtual: "/Common/va", tc: &Transport{SNAT: SNATAutomap}, session: true},
		{name: "the transport-config's snat", virtual: "/Common/va", tc: &Transport{SNAT: SNATPool, SNATAddrs: []netip.Addr{local}}, session: true},
		{name: "a rule's snat", virtual: "/Common/va", tc: &Transport{SNAT: SNATLSN, LSN: "/Common/tb"}, snat: netip.MustParseAddr("127.216.0.9"), session: true},
		{name: "a rule's snat of the other family", virtual: "/Common/va", snat: netip.MustParseAddr("::1"), session: true, pool: "/Common/va", sub: client},
		{name: "a rule's automap", virtual: "/Common/va", automap: true, session: true},
	} {
		r := NewRouter(&Config{LSN: tc.virtual, Local: local}, nil, nil)
		m := &Message{SNAT: tc.snat, SNATAutomap: tc.automap}
		if tc.session {
			s := r.NewSession(nil, nil)
			s.SetSubscriber(netip.AddrPortFrom(netip.AddrFrom16(client.Addr().As16()), client.Port())) // a v4-mapped address is unmapped
			m.origin = s
		}
		v := r.lsnVia(tc.tc, m, dst)
		if v.Pool != tc.pool || v.Pool != "" && v.Subscriber != tc.sub {
			t.Errorf("%s: %+v, want pool %q subscriber %s", tc.name, v, tc.pool, tc.sub)
		}
		cfg := &Config{LSN: tc.virtual, Transports: map[string]*Transport{"t": tc.tc}}
		if tc.tc == nil {
			cfg.Transports = nil
		}
		if want := tc.virtual != "" || tc.tc != nil && tc.tc.SNAT == SNATLSN; cfg.Translates() != want {
			t.Errorf("%s: Translates %t, want %t", tc.name, !want, want)
		}
	}
}
