package daemon

import (
	"hash/fnv"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/mrfdiam"
	"github.com/openltm/openltm/dataplane/mrfsip"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// mrfSIP is a virtual's sip session profile as its router applies it
// (dataplane/mrfsip): its Via and Record-Route, Max-Forwards,
// honor-via (disabled: responses go back by the router's record of the
// transaction), loop-detection (482; loop-detection-mode strict lets a
// spiralling request through), maintenance-mode (503 to what would
// begin something new), honor-route-header (a request goes to the hop
// its Route fields name; honor-route-mode strict addresses it as a
// strict router), passthru-mode (what is no SIP message is forwarded as
// it is), record-route-mode double (two Record-Route values where a
// request crosses sides), service-port (the port its Via and
// Record-Route name), allow-unknown-methods (disabled: 405 to a method
// SIP does not define) and do-not-connect-back (mrfConnectBack). The
// firewall is
// kept with a warning where it differs from the default (its
// persistence: sipPersistence).
func (t *translator) mrfSIP(o *objects.Object, v *dataplane.Virtual, sess *objects.Object, e func(string) string) mrf.Protocol {
	s := &mrfsip.Session{
		InsertVia:   e("insert-via-header") == "enabled",
		RecordRoute: e("insert-record-route-header") == "enabled",
		MaxForwards: e("max-forwards-check") == "enabled",
		Respond:     e("generate-response-on-failure") == "enabled",
		MaxSize:     atoi(e("max-msg-size")),
		MaxHeader:   atoi(e("max-msg-header-size")),
		MaxHeaders:  atoi(e("max-msg-header-count")),
		Host:        v.Destination.String(),
		UDP:         v.IsUDP(),
		IgnoreVia:   e("honor-via") == "disabled",
		LoopDetect:  e("loop-detection") == "enabled",
		LoopStrict:  strings.EqualFold(e("loop-detection-mode"), "strict"),
		Maintenance: e("maintenance-mode") == "enabled",
		HonorRoute:  e("honor-route-header") == "enabled",
		StrictRoute: e("honor-route-mode") == "strict",
		Passthru:    e("passthru-mode") == "enabled",
		DoubleRR:    e("record-route-mode") == "double",
		// allow-unknown-methods disabled: a client's request of a
		// method SIP does not define is answered 405.
		AllowUnknown: e("allow-unknown-methods") == "enabled",
	}
	if sp := atoi(e("service-port")); sp > 0 && sp <= 65535 {
		// The port the virtual's Via and Record-Route name.
		s.Host = netip.AddrPortFrom(v.Destination.Addr(), uint16(sp)).String()
	}
	if cv := e("custom-via"); cv != "none" && cv != "" {
		s.CustomVia = cv
	}
	h := fnv.New64a()
	h.Write([]byte(o.Name))
	s.Salt = h.Sum64()
	if got := e("enable-sip-firewall"); got != "no" && got != "" {
		t.keep(sess, "sip session %s: enable-sip-firewall %s is kept; openltm's SIP routing acts as with no", sess.Name, got)
	}
	return mrfsip.New(s)
}

// mrfConnectBack is the session profile's do-not-connect-back as the
// router applies it: disabled (the default), an answer due to a client
// whose connection or flow has ended still reaches it, over UDP at its
// address, over TCP on a connection back to the address its top Via
// names (with honor-via enabled).
func mrfConnectBack(e func(string) string) bool {
	return e("do-not-connect-back") != "enabled"
}

// sipPersistence is a sip session profile's persistence block
// (`persistence { persist-type session persist-key Call-ID
// persist-timeout 180 }`): with persist-type session, a request with no
// key from a rule is persisted by its Call-ID or the client's address,
// for persist-timeout seconds; Custom persists only by the key a rule
// gives (SIP::persist). [M: F5 documents the words, not a default for an
// absent block; openltm persists only when persist-type session is
// given, by Call-ID unless persist-key says otherwise, for 180 seconds
// unless persist-timeout says otherwise.] A word openltm does not know
// is kept with a warning and persistence stays off.
func (t *translator) sipPersistence(sess *objects.Object, raw string) (mrf.PersistBy, time.Duration) {
	f := strings.Fields(strings.NewReplacer("{", " ", "}", " ").Replace(raw))
	typ, key, ttl := "none", "Call-ID", time.Duration(0)
	for i := 0; i+1 < len(f); i += 2 {
		switch v := f[i+1]; f[i] {
		case "persist-type":
			typ = v
		case "persist-key":
			key = v
		case "persist-timeout":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				t.keep(sess, "sip session %s: persistence persist-timeout %s is kept; openltm's SIP routing does not persist by it", sess.Name, v)
				return mrf.PersistNone, 0
			}
			ttl = time.Duration(n) * time.Second
		default:
			t.keep(sess, "sip session %s: persistence %s is kept; openltm's SIP routing does not persist by it", sess.Name, f[i])
			return mrf.PersistNone, 0
		}
	}
	if !strings.EqualFold(typ, "session") {
		if !strings.EqualFold(typ, "none") {
			t.keep(sess, "sip session %s: persistence persist-type %s is kept; openltm's SIP routing does not persist by it", sess.Name, typ)
		}
		return mrf.PersistNone, 0
	}
	switch strings.ToLower(key) {
	case "call-id":
		return mrf.PersistCallID, ttl
	case "src-addr":
		return mrf.PersistSrcAddr, ttl
	case "custom":
		return mrf.PersistCustom, ttl
	}
	t.keep(sess, "sip session %s: persistence persist-key %s is kept; openltm's SIP routing does not persist by it", sess.Name, key)
	return mrf.PersistNone, 0
}

// mrfLostAction is a diameter session's retransmission-action: what
// becomes of a request whose peer connection closes before its answer.
func mrfLostAction(s string) mrf.LostAction {
	switch s {
	case "retransmit":
		return mrf.LostRetransmit
	case "busy":
		return mrf.LostBusy
	case "unable":
		return mrf.LostUnable
	}
	return mrf.LostFail
}

// mrfDiameter is a virtual's diameter session profile as its router
// applies it (dataplane/mrfdiam; its watchdog, handshake and
// persistence settings: mrfDiameterTimers). discard-unroutable enabled
// drops a request no peer takes rather than answering it.
// dynamic-route-insertion makes each client's connection a route by the
// Origin-Host and Origin-Realm of its CER, and dynamic-route-lookup
// routes requests by those routes first (mrf.DynamicRouter).
// disconnect-peer-action disable or force-offline takes the pool member
// of a peer that sends a DPR out of load balancing (mrf.PeerLeaver). The
// ingress and egress major and critical message rate limits bound each
// client's and each peer connection's requests a second
// (mrf.RateLimiter).
func (t *translator) mrfDiameter(o *objects.Object, v *dataplane.Virtual, sess *objects.Object, e func(string) string) *mrfdiam.Session {
	str := func(name, def string) string {
		if s := e(name); s != "" && s != "none" {
			return s
		}
		return def
	}
	s := &mrfdiam.Session{
		OriginHost:         str("origin-host", "openltm"), // [M]
		OriginRealm:        str("origin-realm", "openltm"),
		OriginHostRewrite:  str("origin-host-rewrite", ""),
		OriginRealmRewrite: str("origin-realm-rewrite", ""),
		DestHostRewrite:    str("dest-host-rewrite", ""),
		DestRealmRewrite:   str("dest-realm-rewrite", ""),
		ProductName:        str("product-name", "openltm"),
		Max:                atoi(e("max-message-size")),
		HostIP:             v.Destination.Addr(),
		NoHostIP:           e("host-ip-address") == "disabled",
		LoopDetect:         e("loop-detection") == "enabled",
		Respond:            e("respond-unroutable") == "enabled" && e("discard-unroutable") != "enabled",
		DynInsert:          e("dynamic-route-insertion") == "enabled",
		DynLookup:          e("dynamic-route-lookup") == "enabled",
	}
	switch e("disconnect-peer-action") {
	case "disable":
		s.OnDisconnect = mrf.LeaveDisable
	case "force-offline":
		s.OnDisconnect = mrf.LeaveOffline
	}
	if n, err := strconv.ParseUint(e("vendor-id"), 10, 32); err == nil {
		s.VendorID = uint32(n)
	}
	apps := func(one, many string) []uint32 {
		var out []uint32
		if n, err := strconv.ParseUint(e(one), 10, 32); err == nil && n != 0 {
			out = append(out, uint32(n))
		}
		if v := t.cfg.Effective(sess, many); v != nil {
			for _, w := range v.List {
				if n, err := strconv.ParseUint(w, 10, 32); err == nil && n != 0 && !slices.Contains(out, uint32(n)) {
					out = append(out, uint32(n))
				}
			}
		}
		return out
	}
	s.AuthApps = apps("auth-application-id", "array-auth-application-id")
	s.AcctApps = apps("acct-application-id", "array-acct-application-id")
	// The message rate limits: requests a second per client connection
	// (ingress) and per peer connection (egress); past the major limit
	// a request is answered DIAMETER_TOO_BUSY, past the critical one
	// dropped [M: F5 documents the settings, not their unit or what
	// crossing them does; openltm reads them as requests a second and
	// sheds load as an overloaded Diameter agent does, politely then
	// silently]. Answers, capabilities exchanges and watchdogs are not
	// counted.
	s.Ingress = mrf.RateLimits{Major: atoi(e("ingress-major-message-rate-limit")), Critical: atoi(e("ingress-critical-message-rate-limit"))}
	s.Egress = mrf.RateLimits{Major: atoi(e("egress-major-message-rate-limit")), Critical: atoi(e("egress-critical-message-rate-limit"))}
	return s
}

// mrfDiameterTimers gives a diameter router the session profile's
// watchdog (watchdog-timeout seconds, 0: none; max-watchdog-failures),
// handshake-timeout, dynamic-route-timeout and persistence: persist-type avp persists each
// request by its persist-avp (a code or a base protocol AVP's name;
// none: Session-Id [M: F5's documents name Session-Id as the AVP a
// Diameter session is persisted by]) for persist-timeout seconds;
// custom persists only by the key a rule gives (DIAMETER::persist); none
// not at all. why is what makes the profile refused ("" none).
func mrfDiameterTimers(cfg *mrf.Config, ds *mrfdiam.Session, e func(string) string) (why string) {
	for _, a := range []struct {
		name string
		dst  *int
	}{{"watchdog-timeout", nil}, {"max-watchdog-failures", &cfg.MaxWatchdogFailures}, {"handshake-timeout", nil}, {"persist-timeout", nil},
		{"dynamic-route-timeout", nil}} {
		n, err := strconv.Atoi(e(a.name))
		if err != nil || n < 0 {
			return a.name + " " + strconv.Quote(e(a.name)) + " is not a count (0 or more)"
		}
		switch a.name {
		case "watchdog-timeout":
			cfg.Watchdog = time.Duration(n) * time.Second
		case "handshake-timeout":
			cfg.Handshake = time.Duration(n) * time.Second
		case "persist-timeout":
			cfg.PersistTTL = time.Duration(n) * time.Second
		case "dynamic-route-timeout":
			// A dynamic route lives while its client sent something
			// within that many seconds (0: while its connection is
			// open) [M: F5 documents the timeout, not what restarts
			// it; openltm counts from the client's last message, its
			// watchdogs included].
			ds.DynTTL = time.Duration(n) * time.Second
		default:
			*a.dst = n
		}
	}
	switch e("persist-type") {
	case "avp":
		cfg.Persist = mrf.PersistAVP
		if s := e("persist-avp"); s != "" && s != "none" {
			code, ok := rules.AVPCode(s)
			if !ok || code == 0 {
				return "persist-avp " + strconv.Quote(s) + " is not an AVP code (a number, or a base protocol AVP such as Session-Id)"
			}
			ds.PersistAVP = code
		}
	case "custom":
		cfg.Persist = mrf.PersistCustom
	default:
		cfg.PersistTTL = 0
	}
	return ""
}

// mrfRetryCodes are a diameter session's
// array-retransmission-result-codes: the Result-Codes whose answers send
// their request to another peer (retransmission-action retransmit). why
// is what makes the profile refused ("" none).
func (t *translator) mrfRetryCodes(sess *objects.Object) (codes []uint32, why string) {
	v := t.cfg.Effective(sess, "array-retransmission-result-codes")
	if v == nil {
		return nil, ""
	}
	for _, w := range v.List {
		n, err := strconv.ParseUint(w, 10, 32)
		if err != nil {
			return nil, "array-retransmission-result-codes " + strconv.Quote(w) + " is not a Result-Code"
		}
		codes = append(codes, uint32(n))
	}
	return codes, ""
}
