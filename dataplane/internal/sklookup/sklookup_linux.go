//go:build linux

package sklookup

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// Offsets in struct bpf_sk_lookup (include/uapi/linux/bpf.h).
const (
	offFamily   = 8
	offProtocol = 12
	offRemote4  = 16
	offRemote6  = 20
	offLocal4   = 40
	offLocal6   = 44
	offPort     = 60

	familyV6 = 10
	protoTCP = 6
	protoUDP = 17
	skPass   = 1
)

// key is a destination as the program looks it up, 28 bytes built on
// the program's stack at fp-28: a tag word, family and protocol (family |
// protocol<<16), port (0: every port) and the address's bytes in network
// order (IPv4 in the first four). The tag is destTag in the dests map; in
// the nets map (an LPM trie) it is the prefix length over the rest, so
// the same bytes, the tag rewritten, are both maps' keys.
type key [28]byte

// destTag is the dests map's tag word: more than any prefix length, so
// mapOf tells the maps' keys apart.
const destTag = ^uint32(0)

func keyOf(a netip.Addr, port uint16, udp bool) key {
	var k key
	fam := uint32(2)
	if a.Is6() && !a.Is4In6() {
		fam = familyV6
	}
	proto := uint32(protoTCP)
	if udp {
		proto = protoUDP
	}
	binary.NativeEndian.PutUint32(k[0:], destTag)
	binary.NativeEndian.PutUint32(k[4:], fam|proto<<16)
	binary.NativeEndian.PutUint32(k[8:], uint32(port))
	if fam == familyV6 {
		b := a.As16()
		copy(k[12:], b[:])
	} else {
		b := a.Unmap().As4()
		copy(k[12:], b[:])
	}
	return k
}

// specificVal marks a port-specific listener's entry in the dests map:
// the program passes. A wildcard's entry holds its socket's index. On
// port 0 (an address passed over on every port) it is past the socket
// map's last index, so the socket lookup misses and the program passes.
const specificVal = ^uint32(0)

// Steer is one attached program and its maps: dests (key → socket index,
// or specificVal), nets (a network virtual's key → socket index, longest
// prefix first) and socks (index → listening socket).
type Steer struct {
	mu    sync.Mutex
	dests *ebpf.Map
	nets  *ebpf.Map
	socks *ebpf.Map
	prog  *ebpf.Program
	link  link.Link
	// keys is what dests holds now; slots the socket index of each
	// wildcard address.
	keys  map[key]uint32
	slots map[key]uint32
	free  []uint32
	// passed counts the short-lived port-specific sockets Pass added
	// (an FTP data listener on a steered address); Sync keeps them. own
	// is what the last Sync asked for itself.
	passed map[key]int
	own    map[key]uint32
}

// lpmFull is the prefix length a lookup in the nets map asks for: the
// family and protocol word, the port word, then all of an IPv6 address.
const lpmFull = 64 + 128

// netKey is a network's key in the nets map (an LPM trie): prefix length
// (64 + the network's bits), family | protocol<<16, the port (0: every
// port), the address's bytes. Its value is the socket's index and the
// network's bits, which the program compares when a network on the
// port and a network on every port both hold the address.
func netKey(p netip.Prefix, port uint16, udp bool) key {
	k := keyOf(p.Masked().Addr(), port, udp)
	binary.NativeEndian.PutUint32(k[0:], uint32(64+p.Bits()))
	return k
}

// program builds the sk_lookup program over the three maps. The key is
// at fp-28 (key's layout), the chosen socket's index at fp-32. Order,
// most specific first (BIG-IP's: the longest destination mask, then a
// port before every port): a port-specific listener of the address
// (pass: the kernel's own lookup finds it); the address on every port;
// then the longest network holding the address, on this port or on
// every port, the one on this port when both are as long.
func program(dests, nets, socks *ebpf.Map) asm.Instructions {
	ld := func(dst asm.Register, off int16) asm.Instruction {
		return asm.LoadMem(dst, asm.R6, off, asm.Word)
	}
	st := func(off int16, src asm.Register) asm.Instruction {
		return asm.StoreMem(asm.RFP, off, src, asm.Word)
	}
	// lookup calls bpf_map_lookup_elem on m with the key on the stack at
	// keyOff; the value's pointer (or 0) is in R0.
	lookup := func(m *ebpf.Map, keyOff int32) asm.Instructions {
		return asm.Instructions{
			asm.LoadMapPtr(asm.R1, m.FD()),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, keyOff),
			asm.FnMapLookupElem.Call(),
		}
	}
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		ld(asm.R3, offProtocol),
		asm.JEq.Imm(asm.R3, protoTCP, "proto"),
		asm.JNE.Imm(asm.R3, protoUDP, "pass"),
		ld(asm.R2, offFamily).WithSymbol("proto"),
		asm.LSh.Imm(asm.R3, 16),
		asm.Or.Reg(asm.R3, asm.R2),
		st(-24, asm.R3),
		asm.Mov.Imm(asm.R3, -1), // destTag
		st(-28, asm.R3),
		asm.Mov.Imm(asm.R3, 0),
		asm.StoreMem(asm.RFP, -16, asm.R3, asm.DWord),
		asm.StoreMem(asm.RFP, -8, asm.R3, asm.DWord),
		asm.JEq.Imm(asm.R2, familyV6, "v6"),
		ld(asm.R3, offLocal4),
		ld(asm.R4, offRemote4),
		asm.JEq.Reg(asm.R3, asm.R4, "pass"), // the address talking to itself
		st(-16, asm.R3),
		asm.Ja.Label("lookup"),
	}
	// IPv6: copy the four words, or-ing local^remote into R5.
	insns = append(insns, asm.Mov.Imm(asm.R5, 0).WithSymbol("v6"))
	for i := int16(0); i < 4; i++ {
		insns = append(insns,
			ld(asm.R3, offLocal6+4*i),
			st(-16+4*i, asm.R3),
			ld(asm.R4, offRemote6+4*i),
			asm.Xor.Reg(asm.R4, asm.R3),
			asm.Or.Reg(asm.R5, asm.R4),
		)
	}
	insns = append(insns,
		asm.JEq.Imm(asm.R5, 0, "pass"),
		// A port-specific listener of the address wins.
		ld(asm.R3, offPort).WithSymbol("lookup"),
		st(-20, asm.R3),
	)
	insns = append(insns, lookup(dests, -28)...)
	insns = append(insns,
		asm.JNE.Imm(asm.R0, 0, "pass"),
		// The address on every port (port 0).
		asm.Mov.Imm(asm.R3, 0),
		st(-20, asm.R3),
	)
	insns = append(insns, lookup(dests, -28)...)
	insns = append(insns,
		// An address passed over on every port (specificVal, a member
		// at port any) is no index of the socket map: that lookup
		// misses and the program passes, with no test of its own.
		asm.JNE.Imm(asm.R0, 0, "found"),
		// The longest network on this port holding the address (R8),
		// then the longest on every port (R0): the LPM key's tag is the
		// prefix length asked for, all of it.
		asm.Mov.Imm(asm.R3, lpmFull),
		st(-28, asm.R3),
		ld(asm.R3, offPort),
		st(-20, asm.R3),
	)
	insns = append(insns, lookup(nets, -28)...)
	insns = append(insns,
		asm.Mov.Reg(asm.R8, asm.R0),
		asm.Mov.Imm(asm.R3, 0),
		st(-20, asm.R3),
	)
	insns = append(insns, lookup(nets, -28)...)
	insns = append(insns,
		asm.JEq.Imm(asm.R8, 0, "any"),
		asm.JEq.Imm(asm.R0, 0, "onport"),
		// Both: the longer network wins, the one on the port if as long.
		asm.LoadMem(asm.R3, asm.R8, 4, asm.Word),
		asm.LoadMem(asm.R4, asm.R0, 4, asm.Word),
		asm.JGT.Reg(asm.R4, asm.R3, "found"),
		asm.Mov.Reg(asm.R0, asm.R8).WithSymbol("onport"),
		asm.Ja.Label("found"),
		asm.JEq.Imm(asm.R0, 0, "pass").WithSymbol("any"),
		asm.LoadMem(asm.R3, asm.R0, 0, asm.Word).WithSymbol("found"),
		st(-32, asm.R3),
	)
	insns = append(insns, lookup(socks, -32)...)
	insns = append(insns,
		asm.JEq.Imm(asm.R0, 0, "pass"),
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Reg(asm.R2, asm.R7),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnSkAssign.Call(),
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.FnSkRelease.Call(),
		asm.Mov.Imm(asm.R0, skPass).WithSymbol("pass"),
		asm.Return(),
	)
	return insns
}

// Open loads the program and attaches it to the calling process's network
// namespace, with no address to steer yet (every lookup passes). The
// error says why where the kernel refuses (no privilege, a kernel before
// 5.9, BPF turned off).
func Open() (*Steer, error) {
	s := &Steer{keys: map[key]uint32{}, slots: map[key]uint32{}, passed: map[key]int{}, own: map[key]uint32{}}
	var err error
	s.dests, err = ebpf.NewMap(&ebpf.MapSpec{Name: "ltm_dests", Type: ebpf.Hash, KeySize: 28, ValueSize: 4, MaxEntries: MaxWildcards + MaxSpecific + MaxPassed})
	if err != nil {
		return nil, fmt.Errorf("cannot make the BPF map: %w", err)
	}
	s.nets, err = ebpf.NewMap(&ebpf.MapSpec{Name: "ltm_nets", Type: ebpf.LPMTrie, KeySize: 28, ValueSize: 8, MaxEntries: MaxWildcards, Flags: unix.BPF_F_NO_PREALLOC})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("cannot make the BPF network map: %w", err)
	}
	s.socks, err = ebpf.NewMap(&ebpf.MapSpec{Name: "ltm_socks", Type: ebpf.SockMap, KeySize: 4, ValueSize: 8, MaxEntries: MaxWildcards})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("cannot make the BPF socket map: %w", err)
	}
	s.prog, err = ebpf.NewProgram(&ebpf.ProgramSpec{Name: "ltm_anyport", Type: ebpf.SkLookup, AttachType: ebpf.AttachSkLookup,
		Instructions: program(s.dests, s.nets, s.socks), License: "GPL"})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("cannot load the BPF sk_lookup program (Linux 5.9 or later, with CAP_BPF): %w", err)
	}
	ns, err := os.Open("/proc/self/ns/net")
	if err != nil {
		s.Close()
		return nil, err
	}
	defer ns.Close()
	s.link, err = link.AttachNetNs(int(ns.Fd()), s.prog)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("cannot attach the BPF sk_lookup program to the network namespace: %w", err)
	}
	for i := MaxWildcards - 1; i >= 0; i-- {
		s.free = append(s.free, uint32(i))
	}
	return s, nil
}

// Sync makes the program steer exactly wild's addresses, passing over
// specific (port-specific listeners on those addresses, and the
// destinations the plane itself connects to: Specific). Entries are put
// before stale ones go, so an address that stays is never unserved.
func (s *Steer) Sync(wild []Wildcard, specific []Specific) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(wild) > MaxWildcards || len(specific) > MaxSpecific {
		return fmt.Errorf("%d addresses on every port and %d port-specific listeners beside them; at most %d and %d", len(wild), len(specific), MaxWildcards, MaxSpecific)
	}
	want := make(map[key]uint32, len(wild)+len(specific)+len(s.passed))
	for _, sp := range specific { // port 0: the address on every port, unless a wildcard's (below)
		want[keyOf(sp.Addr.Addr(), sp.Addr.Port(), sp.UDP)] = specificVal
	}
	keep := make(map[key]bool, len(wild))
	for _, w := range wild {
		if w.Port != 0 && !w.Net.IsValid() {
			return fmt.Errorf("%s port %d: only a network is steered on one port (a host's listener on a port needs no steering)", w.Addr, w.Port)
		}
		keep[w.key()] = true
	}
	for k, slot := range s.slots { // addresses that go: their slots are free for the new ones
		if !keep[k] {
			s.mapOf(k).Delete(k)
			delete(s.keys, k)
			delete(s.slots, k)
			s.socks.Delete(slot) // a closed listener left the map already
			s.free = append(s.free, slot)
		}
	}
	var errs []error
	for _, w := range wild {
		k := w.key()
		slot, ok := s.slots[k]
		if !ok {
			slot = s.free[len(s.free)-1]
			s.free = s.free[:len(s.free)-1]
			s.slots[k] = slot
		}
		if err := s.socks.Update(slot, uint64(w.FD), ebpf.UpdateAny); err != nil {
			errs = append(errs, fmt.Errorf("%s (%s): cannot put its listener in the socket map: %w", w.Addr, w.proto(), err))
			continue
		}
		want[k] = slot
	}
	own := make(map[key]uint32, len(want))
	for k, v := range want {
		own[k] = v
	}
	for k := range s.passed {
		if _, ok := want[k]; !ok {
			want[k] = specificVal
		}
	}
	for k, v := range want {
		if err := s.put(k, v); err != nil {
			errs = append(errs, err)
		}
	}
	for k := range s.keys {
		if _, ok := want[k]; !ok {
			s.mapOf(k).Delete(k)
		}
	}
	s.keys, s.own = want, own
	return errors.Join(errs...)
}

// Pass makes the program pass over sp from now on, beside the
// port-specific listeners Sync was given, until as many Unpass calls:
// a listener a flow opens on a steered address (an FTP gateway's
// passive data listener on a virtual on every port) is reached by the
// kernel's own lookup. Sync keeps such entries.
func (s *Steer) Pass(sp Specific) error {
	if sp.Addr.Port() == 0 {
		return fmt.Errorf("%s: a port-specific socket needs a port", sp.Addr)
	}
	k := keyOf(sp.Addr.Addr(), sp.Addr.Port(), sp.UDP)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.passed[k] == 0 {
		if len(s.passed) >= MaxPassed {
			return fmt.Errorf("%s: %d sockets passed over already, at most %d", sp.Addr, len(s.passed), MaxPassed)
		}
		if _, ok := s.own[k]; !ok {
			if err := s.dests.Update(k, specificVal, ebpf.UpdateAny); err != nil {
				return fmt.Errorf("%s: cannot pass it over: %w", sp.Addr, err)
			}
			s.keys[k] = specificVal
		}
	}
	s.passed[k]++
	return nil
}

// Unpass undoes one Pass of sp; the last one removes the entry unless
// Sync's listeners hold it too.
func (s *Steer) Unpass(sp Specific) {
	k := keyOf(sp.Addr.Addr(), sp.Addr.Port(), sp.UDP)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.passed[k]
	if n == 0 {
		return
	}
	if n > 1 {
		s.passed[k] = n - 1
		return
	}
	delete(s.passed, k)
	if _, ok := s.own[k]; !ok {
		s.dests.Delete(k)
		delete(s.keys, k)
	}
}

// PassedCount is how many sockets Pass holds passed over now.
func (s *Steer) PassedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.passed)
}

// key is the wildcard's key: its address's in dests, its network's in
// nets.
func (w Wildcard) key() key {
	if w.Net.IsValid() {
		return netKey(w.Net, w.Port, w.UDP)
	}
	return keyOf(w.Addr, 0, w.UDP)
}

// put writes k's value v in its map: in nets, beside the network's bits
// (the key's prefix length less the family and port words).
func (s *Steer) put(k key, v uint32) error {
	m := s.mapOf(k)
	if m == s.nets {
		return m.Update(k, [2]uint32{v, binary.NativeEndian.Uint32(k[0:]) - 64}, ebpf.UpdateAny)
	}
	return m.Update(k, v, ebpf.UpdateAny)
}

// mapOf is the map that holds k: a network's key starts with its prefix
// length, at most lpmFull, an address's with destTag, which is more.
func (s *Steer) mapOf(k key) *ebpf.Map {
	if binary.NativeEndian.Uint32(k[0:]) <= lpmFull {
		return s.nets
	}
	return s.dests
}

// Close detaches the program and frees its maps.
func (s *Steer) Close() error {
	var errs []error
	if s.link != nil {
		errs = append(errs, s.link.Close())
	}
	if s.prog != nil {
		errs = append(errs, s.prog.Close())
	}
	if s.socks != nil {
		errs = append(errs, s.socks.Close())
	}
	if s.dests != nil {
		errs = append(errs, s.dests.Close())
	}
	if s.nets != nil {
		errs = append(errs, s.nets.Close())
	}
	return errors.Join(errs...)
}
