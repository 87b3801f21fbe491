package state

import (
	"math"
	"net/netip"
	"sync"
	"time"
)

// Spread is who a virtual server's traffic comes from, kept so that
// `show ltm pool NAME distribution` can say why a pool is unbalanced: the
// client addresses that carry its connections and requests, the
// X-Forwarded-For values its HTTP requests carry, and how many distinct
// users (cookies or X-Forwarded-For values) arrive over how many client
// connections. Its memory is fixed whatever the traffic: the heaviest
// keys are tracked with the Space-Saving algorithm in TopSlots slots (a
// key that carries more than 1/TopSlots of the traffic is always among
// them, its count exact to within the error it reports), and distinct
// users are estimated by linear counting over a 4096-bit map. Recording
// allocates nothing.
type Spread struct {
	mu       sync.Mutex
	conns    topK // client connections by client address
	reqs     topK // HTTP requests by client address
	xff      topK // HTTP requests by their first X-Forwarded-For value
	users    [userBits / 64]uint64
	requests uint64 // HTTP requests seen
	withUser uint64 // of which carried a user identity
}

// TopSlots is how many heavy keys each of a Spread's counts tracks.
const TopSlots = 8

// userBits is the size of the distinct-users bitmap: estimates stay
// within a few percent up to some 10,000 users and saturate near 30,000.
const userBits = 4096

// labelMax bounds the text kept for a key (an IPv6 address is 45 bytes).
const labelMax = 48

type slot struct {
	hash  uint64
	count uint64
	err   uint64
	n     uint8
	label [labelMax]byte
}

// topK is Space-Saving: a key already tracked is counted; a new key takes
// a free slot, or replaces the smallest count and inherits it as its
// error bound.
type topK struct {
	slots [TopSlots]slot
	used  int
	total uint64
}

func (t *topK) add(h uint64, label func(dst []byte) []byte) {
	t.total++
	min := 0
	for i := 0; i < t.used; i++ {
		s := &t.slots[i]
		if s.hash == h {
			s.count++
			return
		}
		if s.count < t.slots[min].count {
			min = i
		}
	}
	var s *slot
	if t.used < TopSlots {
		s = &t.slots[t.used]
		t.used++
		*s = slot{}
	} else {
		s = &t.slots[min]
		s.err = s.count
	}
	s.hash = h
	s.count++
	s.n = uint8(len(label(s.label[:0])))
}

// Heavy is one heavily used key: its text, how many it counted, and by
// how much that count may be too high (Space-Saving's error bound).
type Heavy struct {
	Key   string
	Count uint64
	Err   uint64
}

// Top is what a Spread's count saw: the total and the heaviest keys,
// heaviest first.
type Top struct {
	Total uint64
	Keys  []Heavy
}

func (t *topK) snapshot() Top {
	out := Top{Total: t.total}
	for i := 0; i < t.used; i++ {
		s := &t.slots[i]
		out.Keys = append(out.Keys, Heavy{Key: string(s.label[:s.n]), Count: s.count, Err: s.err})
	}
	for i := 1; i < len(out.Keys); i++ { // a few keys: insertion sort
		for j := i; j > 0 && out.Keys[j].Count > out.Keys[j-1].Count; j-- {
			out.Keys[j], out.Keys[j-1] = out.Keys[j-1], out.Keys[j]
		}
	}
	return out
}

// SpreadSnap is a Spread as shows read it.
type SpreadSnap struct {
	// Conns are client connections by client address; Requests are HTTP
	// requests by client address; XFF are HTTP requests that carried an
	// X-Forwarded-For, by its first value.
	Conns, Requests, XFF Top
	// Users estimates the distinct user identities (cookies, else
	// X-Forwarded-For values) among the HTTP requests; UsersAtLeast says
	// the map saturated and Users is a lower bound.
	Users        int
	UsersAtLeast bool
	// WithUser counts the requests that carried a user identity.
	WithUser uint64
}

// Conn counts a new client connection from a.
func (s *Spread) Conn(a netip.Addr) {
	h := addrHash(a)
	s.mu.Lock()
	s.conns.add(h, a.AppendTo)
	s.mu.Unlock()
}

// Request counts one HTTP request from client, with the first value of
// its X-Forwarded-For (nil for none) and the hash of its user identity
// (0 for none).
func (s *Spread) Request(client netip.Addr, xff []byte, user uint64) {
	ch := addrHash(client)
	var xh uint64
	if len(xff) > 0 {
		xh = bytesHash(xff)
	}
	s.mu.Lock()
	s.requests++
	s.reqs.add(ch, client.AppendTo)
	if len(xff) > 0 {
		s.xff.add(xh, func(dst []byte) []byte {
			return append(dst, xff[:min(len(xff), labelMax)]...)
		})
	}
	if user != 0 {
		s.withUser++
		b := (user >> 32) % userBits // the low bit is always set
		s.users[b/64] |= 1 << (b % 64)
	}
	s.mu.Unlock()
}

// Snapshot copies the counts for a show.
func (s *Spread) Snapshot() SpreadSnap {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := SpreadSnap{Conns: s.conns.snapshot(), Requests: s.reqs.snapshot(), XFF: s.xff.snapshot(), WithUser: s.withUser}
	set := 0
	for _, w := range s.users {
		for ; w != 0; w &= w - 1 {
			set++
		}
	}
	switch {
	case set == userBits:
		// Saturated: linear counting's last meaningful value.
		out.Users, out.UsersAtLeast = int(userBits*math.Log(userBits)), true
	case set > 0:
		out.Users = int(math.Round(-userBits * math.Log(float64(userBits-set)/userBits)))
	}
	return out
}

// Reset forgets everything counted (reset-stats of the virtual).
func (s *Spread) Reset() {
	s.mu.Lock()
	s.conns, s.reqs, s.xff = topK{}, topK{}, topK{}
	s.users = [userBits / 64]uint64{}
	s.requests, s.withUser = 0, 0
	s.mu.Unlock()
}

// The hashes are FNV-1a, 64-bit, finished with a multiply-xorshift so that
// the low bits the user map indexes by are mixed.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

func addrHash(a netip.Addr) uint64 {
	b := a.Unmap().As16()
	h := uint64(fnvOffset)
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return mix(h)
}

func bytesHash(b []byte) uint64 {
	h := uint64(fnvOffset)
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return mix(h)
}

// UserHash hashes a user identity (a cookie, an X-Forwarded-For value)
// for Spread.Request; it is never 0. Identities with several parts are
// combined with Combine.
func UserHash(b []byte) uint64 { return bytesHash(b) | 1 }

// Combine folds another part of an identity into h, so that the parts'
// order does not matter (cookies come in any order).
func Combine(h uint64, part []byte) uint64 { return h + bytesHash(part) | 1 }

// RampShare is the share of its weight slow ramp gives the member now
// under the pool's slow-ramp-time (1: not ramping).
func (m *Member) RampShare(rampTime time.Duration) float64 {
	return m.ramp(time.Now().UnixNano(), rampTime)
}
