package dnssec

import (
	"encoding/base32"
	"strings"

	"github.com/miekg/dns"
)

// Denial of existence is NSEC3 (RFC 5155) made for each answer, "white
// lies" (RFC 7129 appendix B): the record matching a name is owned by
// its hash H with next hashed owner H+1, the record covering a name that
// does not exist spans H-1 to H+1. Nothing is precomputed, the zone
// cannot be walked, and a resolver reusing a record (RFC 8198) denies
// only the one hash it was made for.

// The NSEC3 parameters, as RFC 9276 recommends [M]: SHA-1, no extra
// iteration, no salt, opt-out off.
const (
	nsec3Hash       = dns.SHA1
	nsec3Iterations = 0
	nsec3Salt       = ""
)

// nsec3Param is the NSEC3PARAM record of apex. Its TTL is 0 [M], as BIND
// writes it: only the zone's own servers use it.
func nsec3Param(apex string) *dns.NSEC3PARAM {
	return &dns.NSEC3PARAM{Hdr: dns.RR_Header{Name: apex, Rrtype: dns.TypeNSEC3PARAM, Class: dns.ClassINET},
		Hash: nsec3Hash, Iterations: nsec3Iterations, Salt: nsec3Salt}
}

// Names tells the signer what the zone holds, so that its NSEC3 records
// tell the truth about the names they match: which types a name has (a
// NODATA answer's bitmap, so a resolver reusing it denies only what is
// absent), whether a name exists (the closest encloser of a name that
// does not), and a referral's DS records.
type Names interface {
	// TypesAt lists the types name (lower case) owns.
	TypesAt(name string) []uint16
	// Exists says name owns records or is an empty non-terminal above
	// some.
	Exists(name string) bool
	// RRset is name's records of type t, nil when there are none.
	RRset(name string, t uint16) []dns.RR
}

// hashOf is name's NSEC3 hash, 20 octets.
func hashOf(name string) []byte {
	b, err := base32.HexEncoding.WithPadding(base32.NoPadding).DecodeString(dns.HashName(name, nsec3Hash, nsec3Iterations, nsec3Salt))
	if err != nil || len(b) != 20 {
		return nil // only for a name that does not pack, never asked
	}
	return b
}

// step is h plus d (1 or -1), modulo 2^160: the neighbours of a hash.
func step(h []byte, d int) []byte {
	out := append([]byte(nil), h...)
	for i := len(out) - 1; i >= 0; i-- {
		if d > 0 {
			out[i]++
			if out[i] != 0 {
				break
			}
		} else {
			out[i]--
			if out[i] != 0xff {
				break
			}
		}
	}
	return out
}

func b32(h []byte) string {
	return base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(h)
}

// nsec3 is the record owned by hash owner in apex, next hashed owner
// next, with types.
func nsec3(apex string, owner, next []byte, ttl uint32, types []uint16) *dns.NSEC3 {
	return &dns.NSEC3{Hdr: dns.RR_Header{Name: strings.ToLower(b32(owner)) + "." + apex, Rrtype: dns.TypeNSEC3, Class: dns.ClassINET, Ttl: ttl},
		Hash: nsec3Hash, Iterations: nsec3Iterations, Salt: nsec3Salt, HashLength: 20, NextDomain: b32(next), TypeBitMap: types}
}

// matching is the NSEC3 of a name that exists, with its types.
func matching(apex, name string, ttl uint32, types []uint16) *dns.NSEC3 {
	h := hashOf(name)
	if h == nil {
		return nil
	}
	return nsec3(apex, h, step(h, 1), ttl, types)
}

// covering is an NSEC3 whose span holds name's hash and nothing else that
// can be hashed to (H-1 to H+1). Its owner claims no type: an empty
// non-terminal's record, whatever the hash was made from.
func covering(apex, name string, ttl uint32) *dns.NSEC3 {
	h := hashOf(name)
	if h == nil {
		return nil
	}
	return nsec3(apex, step(h, -1), step(h, 1), ttl, nil)
}

// typesAt is the bitmap of name's NSEC3: the types names gives, DNSKEY
// and NSEC3PARAM at the apex, RRSIG where anything is signed. A
// delegation's own records (NS, glue) are not signed, so its bitmap says
// RRSIG only when it has a DS; an empty non-terminal's is empty.
func typesAt(name string, apex bool, names Names) []uint16 {
	var types []uint16
	if names != nil {
		types = append(types, names.TypesAt(name)...)
	}
	if apex {
		types = append(types, dns.TypeDNSKEY, dns.TypeNSEC3PARAM)
	}
	if len(types) == 0 {
		return nil
	}
	signed := true
	if !apex && hasType(types, dns.TypeNS) {
		signed = hasType(types, dns.TypeDS)
		// Below a cut only NS and DS are the parent's to tell.
		out := types[:0]
		for _, t := range types {
			if t == dns.TypeNS || t == dns.TypeDS {
				out = append(out, t)
			}
		}
		types = out
	}
	if signed {
		types = append(types, dns.TypeRRSIG)
	}
	sortTypes(&types)
	return types
}

func hasType(ts []uint16, t uint16) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// nxdomain is the closest encloser proof (RFC 5155 §7.2.2) for qname: the
// NSEC3 matching its closest encloser (the longest ancestor that exists,
// the apex at worst), the one covering the next closer name (one label
// longer, towards qname) and the one covering the wildcard at the
// closest encloser.
func nxdomain(apex, qname string, ttl uint32, names Names) []dns.RR {
	if qname == apex {
		return nil
	}
	closer, encloser := qname, apex
	for n := qname; n != apex; {
		i, end := dns.NextLabel(n, 0)
		if end {
			break
		}
		parent := n[i:]
		if parent == apex || names != nil && names.Exists(parent) {
			closer, encloser = n, parent
			break
		}
		n = parent
	}
	ce := matching(apex, encloser, ttl, typesAt(encloser, encloser == apex, names))
	nc := covering(apex, closer, ttl)
	wc := covering(apex, "*."+encloser, ttl)
	if ce == nil || nc == nil || wc == nil {
		return nil
	}
	out := []dns.RR{ce, nc}
	if wc.Hdr.Name != nc.Hdr.Name {
		out = append(out, wc)
	}
	return out
}

// noDS is the NSEC3 proving that the delegation cut has no DS record:
// it matches the cut and lists NS alone (opt-out is off).
func noDS(apex, cut string, ttl uint32) *dns.NSEC3 {
	return matching(apex, cut, ttl, []uint16{dns.TypeNS})
}

func sortTypes(ts *[]uint16) {
	xs := *ts
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
	out := xs[:0]
	for i, t := range xs {
		if i == 0 || t != xs[i-1] {
			out = append(out, t)
		}
	}
	*ts = out
}
