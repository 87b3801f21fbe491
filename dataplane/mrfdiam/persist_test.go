package mrfdiam

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/diameter/diamtest"
	"github.com/openltm/openltm/dataplane/diammsg"
	"github.com/openltm/openltm/dataplane/mrf"
)

// TestPersistModes: what DIAMETER::persist's sub-commands ask of a
// request's persistence record, over a ratio route that alternates
// between two peers: use follows the record (and records where a key
// without one went), ignore routes by the routes and records nothing,
// replace records the new destination over the old, bypass records
// only where no record is; delete-on-success forgets the record once
// the request's answer reports success, delete-on-failure does not.
func TestPersistModes(t *testing.T) {
	start := func(addr, name string) *diamtest.Server {
		s, err := diamtest.Start(addr, name, false)
		if err != nil {
			t.Skipf("cannot listen: %v", err)
		}
		t.Cleanup(s.Close)
		return s
	}
	a, b := start("127.155.1.3:0", "peer-a.example"), start("127.155.1.4:0", "peer-b.example")
	pa, pb := &mrf.Peer{Name: "peer_a", Pool: "pa"}, &mrf.Peer{Name: "peer_b", Pool: "pb"}
	r := newRouter(t, &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example", Respond: true},
		map[string]netip.AddrPort{"pa": netip.MustParseAddrPort(a.Addr()), "pb": netip.MustParseAddrPort(b.Addr())},
		&mrf.Route{Name: "r", Ratio: true, Peers: []*mrf.Peer{pa, pb}})
	r.Config().Persist = mrf.PersistCustom
	c := newClient(r)
	const A, B = "peer-a.example", "peer-b.example"
	for i, st := range []struct {
		key  string
		mode mrf.PersistMode
		del  mrf.PersistDelete
		want string
	}{
		{"k", mrf.PersistUse, 0, A},
		{"k", mrf.PersistIgnore, 0, B},
		{"k", mrf.PersistUse, 0, A},
		{"j", mrf.PersistUse, 0, A},
		{"j", mrf.PersistReplace, 0, B},
		{"j", mrf.PersistUse, 0, B},
		{"j", mrf.PersistBypass, 0, A},
		{"j", mrf.PersistUse, 0, B},
		{"d", mrf.PersistUse, mrf.PersistDeleteOnSuccess, B},
		{"d", mrf.PersistUse, 0, A},
		{"d", mrf.PersistUse, mrf.PersistDeleteOnFailure, A},
		{"d", mrf.PersistUse, 0, A},
	} {
		hbh := uint32(300 + i)
		m := c.s.Message(diammsg.Build(diammsg.FlagRequest|diammsg.FlagProxiable, 272, 4, hbh, hbh, diamtest.RequestTo("client.example", "s", "realm", "")))
		m.Persist, m.PersistMode, m.PersistDelete = st.key, st.mode, st.del
		c.s.Handle(m)
		got := c.next(t)
		if got.HopByHop() != hbh || string(got.Get(diammsg.AVPOriginHost)) != st.want {
			t.Fatalf("step %d (%s mode %d delete %d): answer hbh %d from %q, want %q", i+1, st.key, st.mode, st.del, got.HopByHop(), got.Get(diammsg.AVPOriginHost), st.want)
		}
	}
}

// TestSucceeded: an answer succeeds by a 2xxx Result-Code, else a 2xxx
// Experimental-Result-Code; none at all counts as success.
func TestSucceeded(t *testing.T) {
	s := &Session{}
	exp := func(code uint32) []byte {
		g := diammsg.AppendAVP(nil, 266, diammsg.AVPFlagMandatory, 0, diammsg.U32(10415))
		g = diammsg.AppendAVP(g, avpExperimentalResultCode, diammsg.AVPFlagMandatory, 0, diammsg.U32(code))
		return diammsg.AppendAVP(nil, avpExperimentalResult, diammsg.AVPFlagMandatory, 0, g)
	}
	for _, c := range []struct {
		name string
		avps []byte
		want bool
	}{
		{"2001", diammsg.AppendAVP(nil, diammsg.AVPResultCode, diammsg.AVPFlagMandatory, 0, diammsg.U32(2001)), true},
		{"3004", diammsg.AppendAVP(nil, diammsg.AVPResultCode, diammsg.AVPFlagMandatory, 0, diammsg.U32(3004)), false},
		{"experimental 2001", exp(2001), true},
		{"experimental 5030", exp(5030), false},
		{"none", nil, true},
	} {
		if got := s.Succeeded(diammsg.Build(0, 272, 4, 1, 1, c.avps)); got != c.want {
			t.Errorf("%s: Succeeded = %t", c.name, got)
		}
	}
}
