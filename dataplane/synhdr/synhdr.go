// Package synhdr reads what a client's SYN carried — its IP TTL (hop
// limit) and ToS (traffic class), and its TCP options — from the copy
// Linux keeps for a listener that asked for it (TCP_SAVE_SYN), since
// the accepted socket otherwise forgets them. The iRules commands
// TCP::option, IP::ttl, IP::hops and IP::tos read it, and a tcp profile's
// proxy-mss sends the client's MSS on to the member.
package synhdr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// maxOptions is the most option bytes a TCP header holds (a data offset
// of 15 words less the fixed 20 bytes).
const maxOptions = 40

// SYN is what one client's SYN said, parsed once when the connection is
// accepted and kept with the flow; its fixed size makes it one small
// allocation.
type SYN struct {
	// TTL is the IPv4 time to live or IPv6 hop limit of the SYN.
	TTL uint8
	// TOS is the IPv4 type of service or IPv6 traffic class of the SYN.
	TOS uint8
	// MSS is the SYN's maximum segment size option; 0 when it had none.
	MSS uint16
	n   uint8
	opt [maxOptions]byte
}

// Parse reads an IPv4 or IPv6 header followed by a TCP header, as
// TCP_SAVED_SYN returns them; ok is false when b is not one (too short,
// another protocol, an IPv6 extension header before TCP).
func Parse(b []byte) (s SYN, ok bool) {
	if len(b) < 1 {
		return s, false
	}
	var tcp []byte
	switch b[0] >> 4 {
	case 4:
		ihl := int(b[0]&0x0f) * 4
		if ihl < 20 || len(b) < ihl || b[9] != 6 {
			return s, false
		}
		s.TOS, s.TTL = b[1], b[8]
		tcp = b[ihl:]
	case 6:
		if len(b) < 40 || b[6] != 6 {
			return s, false
		}
		s.TOS = b[0]<<4 | b[1]>>4
		s.TTL = b[7]
		tcp = b[40:]
	default:
		return s, false
	}
	if len(tcp) < 20 {
		return s, false
	}
	off := int(tcp[12]>>4) * 4
	if off < 20 || len(tcp) < off {
		return s, false
	}
	s.n = uint8(copy(s.opt[:], tcp[20:off]))
	if v, found := s.Option(2, false); found && len(v) == 2 {
		s.MSS = uint16(v[0])<<8 | uint16(v[1])
	}
	return s, true
}

// Option is the value (the bytes after kind and length) of the first,
// or with last the last, option of kind in the SYN; found is false when
// the SYN had none. A malformed option list is read up to the fault.
func (s *SYN) Option(kind byte, last bool) (v []byte, found bool) {
	o := s.opt[:s.n]
	for i := 0; i < len(o); {
		switch o[i] {
		case 0: // end of the option list
			return v, found
		case 1: // no-operation
			i++
			continue
		}
		if i+1 >= len(o) || o[i+1] < 2 || i+int(o[i+1]) > len(o) {
			return v, found
		}
		if o[i] == kind {
			v, found = o[i+2:i+int(o[i+1])], true
			if !last {
				return v, found
			}
		}
		i += int(o[i+1])
	}
	return v, found
}

// Picks is a tcp profile's tcp-options: which option kinds the rules
// may read (TCP::option get), each its first or its last occurrence.
// It is comparable, so a profile's socket settings stay so.
type Picks struct {
	named, last [4]uint64
}

// Empty reports whether no option kind is named.
func (p Picks) Empty() bool { return p.named == [4]uint64{} }

// Named reports whether kind is collected, and whether its last
// occurrence is (rather than its first).
func (p Picks) Named(kind byte) (named, last bool) {
	w, b := kind/64, uint64(1)<<(kind%64)
	return p.named[w]&b != 0, p.last[w]&b != 0
}

// ParsePicks reads tcp-options as BIG-IP writes it: none, or
// "{KIND first|last} ..." with each KIND an option kind from 2 to 255,
// named once.
func ParsePicks(s string) (Picks, error) {
	var p Picks
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return p, nil
	}
	for s != "" {
		if s[0] != '{' {
			return Picks{}, fmt.Errorf("tcp-options %q: expected {KIND first|last}", s)
		}
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return Picks{}, errors.New("tcp-options: a { without its }")
		}
		f := strings.Fields(s[1:end])
		s = strings.TrimSpace(s[end+1:])
		if len(f) != 2 || f[1] != "first" && f[1] != "last" {
			return Picks{}, fmt.Errorf("tcp-options {%s}: expected {KIND first|last}", strings.Join(f, " "))
		}
		k, err := strconv.Atoi(f[0])
		if err != nil || k < 2 || k > 255 {
			return Picks{}, fmt.Errorf("tcp-options {%s}: the option kind must be from 2 to 255", strings.Join(f, " "))
		}
		if named, _ := p.Named(byte(k)); named {
			return Picks{}, fmt.Errorf("tcp-options: option %d is named twice", k)
		}
		w, b := k/64, uint64(1)<<(k%64)
		p.named[w] |= b
		if f[1] == "last" {
			p.last[w] |= b
		}
	}
	return p, nil
}
