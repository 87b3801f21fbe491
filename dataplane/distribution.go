package dataplane

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/persist"
)

// Distribution is why a pool's load is spread as it is (`show ltm pool
// NAME distribution`): each member's share of connections, requests and
// persistence records with what limits it, where the traffic of the
// virtual servers using the pool comes from, and the findings that
// explain an uneven spread, each with the change that fixes it.
type Distribution struct {
	Pool     string
	LBMode   string
	SlowRamp time.Duration
	Members  []MemberShare
	// Records counts the pool's persistence records.
	Records  int
	Virtuals []VirtualSpread
	Findings []Finding
}

// MemberShare is one member's part of the pool's load.
type MemberShare struct {
	Name string
	Addr netip.AddrPort
	// State is up, disabled, down or forced-offline: what load balancing
	// and persistence make of the member (reference §3.3).
	State                        string
	CurConns, TotConns, Requests uint64
	Records                      int
	// ConnectionLimit is the member's (0: none); AtLimit says it or its
	// node's limit is reached now.
	ConnectionLimit int
	AtLimit         bool
	// Ramp is the share of its weight slow ramp gives the member now (1:
	// not ramping).
	Ramp float64
}

// VirtualSpread is where the traffic of a virtual server using the pool
// comes from, and how it balances it.
type VirtualSpread struct {
	Name        string
	Destination netip.AddrPort
	// Persist and Fallback name the persistence methods (source-addr,
	// cookie insert, universal, ...); "" for none.
	Persist, Fallback string
	// HTTP: the virtual has an http profile; OneConnect: and a one-connect
	// profile, so that each request is balanced and persisted on its own.
	// Without OneConnect an HTTP virtual balances the client connection.
	HTTP, OneConnect bool
	// Messages: the virtual balances each message (an mblb profile).
	Messages bool
	// Records counts the virtual's records in the pool, by mode (a rule's
	// persist uie or hash shows here when no profile says so).
	Records []ModeCount
	// ClientConns are client connections by client address; Requests are
	// HTTP requests by client address; XFF are HTTP requests by their
	// first X-Forwarded-For value; each with its heaviest keys.
	ClientConns, Requests, XFF Top
	// Users estimates the distinct users (cookies, else X-Forwarded-For
	// values) among the HTTP requests; UsersAtLeast: a lower bound.
	Users        int
	UsersAtLeast bool
}

// ModeCount is how many records of one mode.
type ModeCount struct {
	Mode  persist.Mode
	Count int
}

// Top is a count and its heaviest keys (client addresses, X-Forwarded-For
// values), kept in fixed memory (state.Spread).
type Top = state.Top

// Heavy is one of a Top's keys, with its count and error bound.
type Heavy = state.Heavy

// Finding is one cause of an uneven spread and the change that fixes it.
type Finding struct {
	// Kind names the cause: few-clients, users-per-connection, one-xff,
	// records-pile, member-disabled, member-forced-offline, member-down,
	// member-slow-ramp, member-at-limit.
	Kind string
	What string
	Fix  string
}

// The thresholds of the findings. A spread finding needs a sample of
// minRequests requests (or minConns client connections) so that a few
// connections do not raise an alarm.
const (
	// minRequests and minConns: the smallest sample a spread finding is
	// drawn from.
	minRequests = 20
	minConns    = 10
	// fewClientsShare: the (at most) fewClients heaviest client addresses
	// carry this share of a virtual's connections or requests while it
	// persists on the source address.
	fewClients      = 3
	fewClientsShare = 0.8
	// oneXFFShare: the heaviest X-Forwarded-For value carries this share
	// of the requests that have one.
	oneXFFShare = 0.8
	// usersPerConn: distinct users per client connection on an HTTP
	// virtual without OneConnect, with at least minUsers users.
	usersPerConn = 2
	minUsers     = 4
	// minRecords: the smallest number of records a pile-up is judged on;
	// a member piles them when its share is more than halfway between a
	// fair share and all of them.
	minRecords = 4
)

// Distribution explains the spread of one pool; ok is false when there is
// no such pool.
func (p *Plane) Distribution(pool string) (Distribution, bool) {
	p.mu.Lock()
	pr := p.pools[pool]
	var vs []*state.Virtual
	for _, name := range sortedKeys(p.virtuals) {
		v := p.virtuals[name]
		if s := v.Snap.Load(); s != nil && s.Cfg.Pool == pool {
			vs = append(vs, v)
		}
	}
	p.mu.Unlock()
	if pr == nil {
		return Distribution{}, false
	}
	ps := pr.Snap.Load()
	d := Distribution{Pool: pool, LBMode: string(ps.Cfg.LBMode), SlowRamp: ps.Cfg.SlowRampTime}
	if d.LBMode == "" {
		d.LBMode = string(RoundRobin)
	}
	recs := map[netip.AddrPort]int{}
	byVirtual := map[string]map[persist.Mode]int{}
	d.Records = p.persist.Walk(persist.Filter{Pool: pool}, func(r *persist.Record) bool {
		recs[r.Member]++
		if byVirtual[r.Virtual] == nil {
			byVirtual[r.Virtual] = map[persist.Mode]int{}
		}
		byVirtual[r.Virtual][r.Mode]++
		return true
	})
	for _, m := range ps.Members {
		c := m.Cfg.Load()
		d.Members = append(d.Members, MemberShare{
			Name: m.Name, Addr: c.Addr, State: availWord(m.Availability()),
			CurConns: uint64(max(m.Stats.Cur.Load(), 0)), TotConns: m.Stats.Tot.Load(), Requests: m.Stats.Requests.Load(),
			Records: recs[c.Addr], ConnectionLimit: c.ConnectionLimit, AtLimit: m.AtConnectionLimit(),
			Ramp: m.RampShare(ps.Cfg.SlowRampTime),
		})
	}
	for _, v := range vs {
		cfg := v.Snap.Load().Cfg
		sp := v.Spread.Snapshot()
		x := VirtualSpread{Name: v.Name, Destination: cfg.Destination,
			Persist: persistWord(cfg.Persist), Fallback: persistWord(cfg.FallbackPersist),
			ClientConns: sp.Conns, Requests: sp.Requests, XFF: sp.XFF, Users: sp.Users, UsersAtLeast: sp.UsersAtLeast}
		for m := persist.SourceAddress; m <= persist.Hash; m++ {
			if n := byVirtual[v.Name][m]; n > 0 {
				x.Records = append(x.Records, ModeCount{Mode: m, Count: n})
			}
		}
		if mb := cfg.MBLB; mb != nil {
			x.HTTP, x.OneConnect = mb.Request.Mode == mblb.HTTP, mb.OneConnect != nil
			x.Messages = !x.HTTP
		}
		d.Virtuals = append(d.Virtuals, x)
	}
	d.Findings = findings(&d)
	return d, true
}

func availWord(a state.Avail) string {
	switch a {
	case state.AvailDisabled:
		return "disabled"
	case state.AvailDown:
		return "down"
	case state.AvailForced:
		return "forced-offline"
	}
	return "up"
}

// persistWord names a persistence profile's method as the show prints
// it, with its profile.
func persistWord(p *Persistence) string {
	if p == nil {
		return ""
	}
	return string(p.Method) + " (" + p.Profile + ")"
}

// sourcePersist reports whether a virtual persists on the client's address.
func (v *VirtualSpread) sourcePersist() bool {
	return strings.HasPrefix(v.Persist, string(PersistSourceAddr)+" ") ||
		strings.HasPrefix(v.Fallback, string(PersistSourceAddr)+" ")
}

// share is the part of t's total the n heaviest keys carry, and those keys.
func share(t Top, n int) (float64, []string) {
	if t.Total == 0 {
		return 0, nil
	}
	var sum uint64
	var keys []string
	for i := 0; i < len(t.Keys) && i < n; i++ {
		sum += t.Keys[i].Count - t.Keys[i].Err
		keys = append(keys, t.Keys[i].Key)
	}
	return float64(sum) / float64(t.Total), keys
}

// findings draws the causes of an uneven spread from d, member states
// first, then each virtual's traffic, then the records.
func findings(d *Distribution) []Finding {
	var out []Finding
	add := func(kind, fix, what string, a ...any) {
		out = append(out, Finding{Kind: kind, What: fmt.Sprintf(what, a...), Fix: fix})
	}
	pool := d.Pool
	usable := 0
	for i := range d.Members {
		m := &d.Members[i]
		name := m.Name
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		modify := func(set string) string {
			return fmt.Sprintf("modify ltm pool %s members modify { %s { %s } }", pool, name, set)
		}
		switch m.State {
		case "disabled":
			add("member-disabled", modify("session user-enabled"),
				"member %s is disabled: it takes only persisted clients, and no new ones", m.Name)
		case "forced-offline":
			add("member-forced-offline", modify("state user-up"),
				"member %s is forced offline: it takes no traffic, persisted clients included", m.Name)
		case "down":
			add("member-down", "check the member's service, or the pool's monitor if the service is well",
				"member %s is marked down by its monitor (or its node's): it takes no traffic", m.Name)
		default:
			usable++
		}
		if m.Ramp < 1 && m.State == "up" {
			add("member-slow-ramp", fmt.Sprintf("wait, or shorten the ramp: modify ltm pool %s slow-ramp-time <seconds>", pool),
				"member %s is slow-ramping: it takes %.0f%% of its share of new connections until slow-ramp-time (%s) has passed since it came back",
				m.Name, m.Ramp*100, d.SlowRamp)
		}
		if m.AtLimit {
			add("member-at-limit", "raise the limit ("+modify("connection-limit <n>")+", or the node's), or add members",
				"member %s is at its connection limit (%d, or its node's): new connections go elsewhere", m.Name, m.ConnectionLimit)
		}
	}
	for i := range d.Virtuals {
		v := &d.Virtuals[i]
		vname := v.Name
		if v.sourcePersist() {
			t := v.Requests
			what := "requests"
			if t.Total < minRequests {
				t, what = v.ClientConns, "connections"
			}
			if (what == "requests" && t.Total >= minRequests) || (what == "connections" && t.Total >= minConns) {
				if sh, keys := share(t, fewClients); sh >= fewClientsShare {
					add("few-clients", cookieFix(v),
						"%s: %s carr%s %.0f%% of %d %s while it persists on the source address: a NAT or gateway in front gives many users one address, and they all share one record and one member",
						vname, strings.Join(keys, ", "), plural(len(keys), "y", "ies"), sh*100, t.Total, what)
				}
			}
		}
		if x := v.XFF; x.Total >= minRequests && len(x.Keys) > 0 {
			if sh, keys := share(x, 1); sh >= oneXFFShare {
				add("one-xff", "persist on a cookie and balance each request: "+cookieFix(v),
					"%s: one X-Forwarded-For value, %s, is in %.0f%% of %d requests that carry one: whoever inserts it sees every user behind one address (a NAT in front of it), so persisting or balancing on it cannot tell users apart",
					vname, keys[0], sh*100, x.Total)
			}
		}
		if v.HTTP && !v.OneConnect && v.Users >= minUsers && v.ClientConns.Total > 0 &&
			uint64(v.Users) >= usersPerConn*v.ClientConns.Total {
			add("users-per-connection", fmt.Sprintf("balance and persist each request: modify ltm virtual %s profiles add { oneconnect } (or turn connection reuse off on the proxy in front)", vname),
				"%s: %d users (distinct cookies or X-Forwarded-For values) arrived over %d client connection%s, and without a one-connect profile the virtual balances the connection, not the request: a proxy in front multiplexes many users over few connections, and each connection's users all go to one member",
				vname, v.Users, v.ClientConns.Total, plural(int(v.ClientConns.Total), "s", ""))
		}
	}
	if d.Records >= minRecords && usable >= 2 {
		n := float64(len(d.Members))
		for i := range d.Members {
			m := &d.Members[i]
			sh := float64(m.Records) / float64(d.Records)
			if sh > (1+1/n)/2 {
				add("records-pile", "see which keys: show ltm persistence persist-records node-addr "+m.Addr.Addr().String()+
					"; delete ltm persistence persist-records to start over, and persist on a key that tells users apart (a cookie)",
					"member %s holds %d of the pool's %d persistence records (%.0f%%): the clients keep being sent where their records point",
					m.Name, m.Records, d.Records, sh*100)
			}
		}
	}
	return out
}

// cookieFix is the change that persists a virtual's users by cookie and
// balances each request: cookie persistence, and the http and one-connect
// profiles it lacks.
func cookieFix(v *VirtualSpread) string {
	fix := "modify ltm virtual " + v.Name + " persist replace-all-with { cookie { default yes } }"
	switch {
	case !v.HTTP:
		fix += " profiles add { http oneconnect }"
	case !v.OneConnect:
		fix += " profiles add { oneconnect }"
	}
	return fix
}

func plural(n int, many, one string) string {
	if n == 1 {
		return one
	}
	return many
}
