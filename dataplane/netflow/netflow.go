// Package netflow is the netflow profile of a virtual server (`ltm
// profile netflow`): when one of the virtual's connections ends, the
// profile reports it as flow records to a log publisher's ipfix
// destinations, through dataplane/ipfix's exporters, in the profile's
// netflow-version: NetFlow v5 (the default), NetFlow v9 or IPFIX.
//
// A connection is reported as two unidirectional flows, the classic
// NetFlow view every collector reads [M: BIG-IP's record layout is not
// documented]: the client's packets to the virtual address, and the
// virtual's answers to the client (when there were any), each with its
// octets, packets, start and end. IPFIX records also carry the
// virtual's name in F5's contextName element (enterprise 12276, id 9),
// where BIG-IP's IPFIX templates put the virtual server a record is
// about; NetFlow v5's fixed record and NetFlow v9, which has no
// enterprise elements, carry none [M]. A virtual without the profile
// pays one nil check at a connection's end; one with it fills pooled
// records and allocates nothing per connection.
package netflow

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/ipfix"
)

// Sink is where a profile's records go: the ipfix destinations of its
// log publisher, each through its exporter for version v. It reports
// whether any destination queued the record.
type Sink interface {
	Send(v ipfix.Version, r *ipfix.Record) bool
}

// Stats are a profile's counters, kept across commits (the daemon hands
// the same Stats to every generation of a profile), for `show ltm
// profile netflow`.
type Stats struct {
	// Flows are the connections reported; Records the records queued
	// for a collector; Dropped the records no destination took (no
	// publisher, no ipfix destination, a full queue).
	Flows, Records, Dropped atomic.Uint64
}

// Reset zeroes the counters (reset-stats).
func (s *Stats) Reset() {
	s.Flows.Store(0)
	s.Records.Store(0)
	s.Dropped.Store(0)
}

// Profile is one netflow profile as a commit resolved it.
type Profile struct {
	// Name is the profile's full path.
	Name string
	// Version is netflow-version.
	Version ipfix.Version
	// Publisher is the log publisher's full path (for shows).
	Publisher string
	// Sink takes the records; nil drops them (counted).
	Sink Sink
	// Stats count what the profile sent.
	Stats *Stats
	// V4 and V6 are the NetFlow v9 and IPFIX templates of IPv4 and IPv6
	// flows (TemplateSpec); v5 has its own fixed layout.
	V4, V6 *ipfix.Template
	// X4 and X6 are the IPFIX templates with the virtual's name
	// (TemplateSpecNamed, Elements); nil: IPFIX records use V4 and V6.
	X4, X6 *ipfix.Template
	// Virtual is the full path of the virtual server whose connections
	// the profile reports, the contextName of its IPFIX records.
	Virtual string
}

// The fields of the v9 and IPFIX templates, in order.
const (
	fSrcAddr = iota
	fDstAddr
	fSrcPort
	fDstPort
	fProto
	fOctets
	fPackets
	fStart
	fEnd
	nFields
	fVirtual = nFields // TemplateSpecNamed's contextName
)

// ContextName is F5's IPFIX element for the name of the object a
// record is about (the virtual server's, here): enterprise 12276 (F5
// Networks), id 9, a variable-length string.
var ContextName = func() *ipfix.Element {
	e, err := ipfix.NewElement("contextName", 12276, 9, ipfix.String, 0)
	if err != nil {
		panic(err)
	}
	return e
}()

// elements are IANA's and ContextName, which TemplateSpecNamed names.
var elements = func() *ipfix.Elements {
	els, err := ipfix.NewElements([]*ipfix.Element{ContextName})
	if err != nil {
		panic(err)
	}
	return els
}()

// Elements is the element set the templates of TemplateSpecNamed are
// made with.
func Elements() *ipfix.Elements { return elements }

// TemplateSpecNamed is TemplateSpec with the virtual's name last (F5's
// contextName), for IPFIX records.
func TemplateSpecNamed(v string) string { return TemplateSpec(v) + " contextName" }

// TemplateSpec lists the elements of the v9 and IPFIX records with
// addresses of family v ("IPv4" or "IPv6"), as IPFIX::template create
// writes them, so the daemon can make them in the system's one template
// table (their ids then never meet an iRule's on a shared collector).
func TemplateSpec(v string) string {
	return "source" + v + "Address destination" + v + "Address sourceTransportPort destinationTransportPort protocolIdentifier octetDeltaCount packetDeltaCount flowStartMilliseconds flowEndMilliseconds"
}

// v5 is NetFlow v5's 48-octet record as a template of fixed fields, so
// that the exporter packs it as it packs v9 records (without sending
// the template): srcaddr, dstaddr, nexthop, input, output, dPkts,
// dOctets, First, Last, srcport, dstport, pad1, tcp_flags, prot, tos,
// src_as, dst_as, src_mask, dst_mask, pad2.
var v5 = func() *ipfix.Template {
	u := func(name string, n uint16) ipfix.Field {
		return ipfix.Field{Elem: &ipfix.Element{Name: name, Type: ipfix.Unsigned64, Size: n}, Len: n}
	}
	a := func(name string) ipfix.Field {
		return ipfix.Field{Elem: &ipfix.Element{Name: name, Type: ipfix.IPv4Address, Size: 4}, Len: 4}
	}
	return ipfix.NewTemplate(0, []ipfix.Field{
		a("srcaddr"), a("dstaddr"), a("nexthop"), u("input", 2), u("output", 2),
		u("dPkts", 4), u("dOctets", 4), u("First", 4), u("Last", 4),
		u("srcport", 2), u("dstport", 2), u("pad1", 1), u("tcp_flags", 1), u("prot", 1), u("tos", 1),
		u("src_as", 2), u("dst_as", 2), u("src_mask", 1), u("dst_mask", 1), u("pad2", 2),
	})
}()

// The fields of v5's record that a flow fills.
const (
	v5Src     = 0
	v5Dst     = 1
	v5Pkts    = 5
	v5Octets  = 6
	v5First   = 7
	v5Last    = 8
	v5SrcPort = 9
	v5DstPort = 10
	v5Proto   = 13
)

var records = sync.Pool{New: func() any { return new(ipfix.Record) }}

// Protocol numbers of the flows' Protocol words.
func protoNumber(p string) uint64 {
	switch p {
	case "udp":
		return 17
	case "sctp":
		return 132
	}
	return 6
}

// Export reports a connection that ended now: f's client side (its
// client, the address it reached, its counters). It never blocks: the
// records are queued by the exporters.
func (p *Profile) Export(f *flows.Flow) {
	p.ExportAt(f, time.Now())
}

// ExportAt is Export with the connection's end given.
func (p *Profile) ExportAt(f *flows.Flow, end time.Time) {
	p.Stats.Flows.Add(1)
	start := f.Created()
	proto := protoNumber(f.Protocol)
	p.send(f.Client, f.Local, proto, f.BytesIn.Load(), f.PktsIn.Load(), start, end)
	p.send(f.Local, f.Client, proto, f.BytesOut.Load(), f.PktsOut.Load(), start, end)
}

// send reports one direction of a flow; a direction that carried
// nothing (a UDP client the member never answered) is no flow and sends
// no record [M].
func (p *Profile) send(src, dst netip.AddrPort, proto, octets, pkts uint64, start, end time.Time) {
	if octets == 0 && pkts == 0 {
		return
	}
	r := records.Get().(*ipfix.Record)
	defer records.Put(r)
	sa, da := src.Addr().Unmap(), dst.Addr().Unmap()
	if p.Version == ipfix.NetFlowV5 {
		if !sa.Is4() || !da.Is4() {
			// NetFlow v5 carries IPv4 flows only.
			p.Stats.Dropped.Add(1)
			return
		}
		r.Reset(v5)
		r.PutAddr(v5Src, sa)
		r.PutAddr(v5Dst, da)
		r.PutUint(v5Pkts, min(pkts, 1<<32-1))
		r.PutUint(v5Octets, min(octets, 1<<32-1))
		r.PutUint(v5First, uint64(ipfix.SysUptime(start)))
		r.PutUint(v5Last, uint64(ipfix.SysUptime(end)))
		r.PutUint(v5SrcPort, uint64(src.Port()))
		r.PutUint(v5DstPort, uint64(dst.Port()))
		r.PutUint(v5Proto, proto)
	} else {
		t := p.V4
		named := p.Version == ipfix.IPFIX && p.X4 != nil && p.X6 != nil
		if named {
			t = p.X4
		}
		if !sa.Is4() || !da.Is4() {
			t = p.V6
			if named {
				t = p.X6
			}
			sa, da = src.Addr(), dst.Addr()
		}
		if t == nil {
			p.Stats.Dropped.Add(1)
			return
		}
		r.Reset(t)
		r.PutAddr(fSrcAddr, sa)
		r.PutAddr(fDstAddr, da)
		r.PutUint(fSrcPort, uint64(src.Port()))
		r.PutUint(fDstPort, uint64(dst.Port()))
		r.PutUint(fProto, proto)
		r.PutUint(fOctets, octets)
		r.PutUint(fPackets, pkts)
		r.PutUint(fStart, uint64(start.UnixMilli()))
		r.PutUint(fEnd, uint64(end.UnixMilli()))
		if named {
			r.PutString(fVirtual, p.Virtual)
		}
	}
	if p.Sink != nil && p.Sink.Send(p.Version, r) {
		p.Stats.Records.Add(1)
		return
	}
	p.Stats.Dropped.Add(1)
}

// CheckTemplate reports whether t has the fields Export fills, in its
// order: the daemon's guard that a template table gave what was asked.
func CheckTemplate(t *ipfix.Template) bool {
	return t != nil && len(t.Fields) == nFields
}

// CheckTemplateNamed is CheckTemplate for TemplateSpecNamed's templates.
func CheckTemplateNamed(t *ipfix.Template) bool {
	return t != nil && len(t.Fields) == nFields+1 && t.Fields[fVirtual].Elem.Enterprise == ContextName.Enterprise &&
		t.Fields[fVirtual].Elem.ID == ContextName.ID
}
