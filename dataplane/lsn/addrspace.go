package lsn

import (
	"math/big"
	"net/netip"
	"sync/atomic"
)

// counter is one of a pool's statistics.
type counter = atomic.Int64

// maxPrefixAddrs bounds the addresses one prefix counts for: an IPv6
// member's /64 is far more than any pool can use [M].
const maxPrefixAddrs = 1 << 32

// addrSpace is the translation addresses of a list of prefixes, counted
// without being listed: the i-th address is found by walking the
// prefixes.
type addrSpace struct {
	prefixes []netip.Prefix
	sizes    []uint64
	n        uint64
}

func newAddrSpace(ps []netip.Prefix) addrSpace {
	var s addrSpace
	for _, p := range ps {
		p = p.Masked()
		host := p.Addr().BitLen() - p.Bits()
		size := uint64(maxPrefixAddrs)
		if host < 32 {
			size = 1 << host
		}
		s.prefixes = append(s.prefixes, p)
		s.sizes = append(s.sizes, size)
		s.n += size
	}
	return s
}

// at is the i-th address (0 ≤ i < n).
func (s *addrSpace) at(i uint64) (netip.Addr, bool) {
	for k, size := range s.sizes {
		if i < size {
			return addOffset(s.prefixes[k].Addr(), i), true
		}
		i -= size
	}
	return netip.Addr{}, false
}

// index is a's place among the addresses; false when it is not one.
func (s *addrSpace) index(a netip.Addr) (uint64, bool) {
	var base uint64
	for k, p := range s.prefixes {
		if p.Contains(a) {
			off := offset(p.Addr(), a)
			if off < s.sizes[k] {
				return base + off, true
			}
			return 0, false
		}
		base += s.sizes[k]
	}
	return 0, false
}

func (s *addrSpace) contains(a netip.Addr) bool {
	_, ok := s.index(a)
	return ok
}

// hasFamily reports whether a prefix is IPv4 (four) or IPv6.
func (s *addrSpace) hasFamily(four bool) bool {
	for _, p := range s.prefixes {
		if p.Addr().Is4() == four {
			return true
		}
	}
	return false
}

func addOffset(a netip.Addr, off uint64) netip.Addr {
	if a.Is4() {
		b := a.As4()
		v := uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
		v += off
		return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
	}
	b := a.As16()
	x := new(big.Int).SetBytes(b[:])
	x.Add(x, new(big.Int).SetUint64(off))
	var out [16]byte
	x.FillBytes(out[:])
	return netip.AddrFrom16(out)
}

func offset(base, a netip.Addr) uint64 {
	if base.Is4() {
		x, y := base.As4(), a.As4()
		bv := uint64(x[0])<<24 | uint64(x[1])<<16 | uint64(x[2])<<8 | uint64(x[3])
		av := uint64(y[0])<<24 | uint64(y[1])<<16 | uint64(y[2])<<8 | uint64(y[3])
		return av - bv
	}
	x, y := base.As16(), a.As16()
	d := new(big.Int).Sub(new(big.Int).SetBytes(y[:]), new(big.Int).SetBytes(x[:]))
	if !d.IsUint64() {
		return maxPrefixAddrs
	}
	return d.Uint64()
}
