// Package sflowdec reads sFlow version 5 datagrams, as sflow.org's
// "sFlow Version 5", "sFlow HTTP Structures" and "sFlow Host Structures"
// lay them out: the collector side of dataplane/sflow, written from the
// specifications apart from its encoder so that each checks the other.
// Records it does not know are kept as their format and length.
package sflowdec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strings"
)

// Datagram is one sFlow datagram.
type Datagram struct {
	Agent    netip.Addr
	SubAgent uint32
	Sequence uint32
	Uptime   uint32 // milliseconds
	Samples  []Sample
}

// Sample is a flow sample (Flow true) or a counter sample.
type Sample struct {
	Flow     bool
	Sequence uint32
	Class    uint32 // the source id's top 8 bits
	Index    uint32 // its other 24
	Rate     uint32 // flow samples: the sampling rate
	Pool     uint32 // flow samples: requests (or frames) seen
	// Drops, Input and Output are a flow sample's drops and interfaces
	// (ifindex; 0: unknown).
	Drops, Input, Output uint32
	Records              []Record
}

// Record is one flow or counter record: Format (enterprise 0 only) and
// the fields read, by the specification's names.
type Record struct {
	Format uint32
	Fields []Field
}

// Field is a record's field.
type Field struct {
	Name  string
	Value string
}

// Get is the value of the record's field name ("" when absent).
func (r Record) Get(name string) string {
	for _, f := range r.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

type reader struct {
	b   []byte
	err error
}

var errShort = errors.New("sflowdec: datagram ends inside a structure")

func (r *reader) u32() uint32 {
	if r.err != nil || len(r.b) < 4 {
		r.err = errShort
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *reader) u64() uint64 {
	hi := uint64(r.u32())
	return hi<<32 | uint64(r.u32())
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n < 0 || len(r.b) < n {
		r.err = errShort
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// opaque reads a length and that many bytes padded to four.
func (r *reader) opaque() []byte {
	n := int(r.u32())
	v := r.bytes(n)
	r.bytes((4 - n%4) % 4)
	return v
}

func (r *reader) addr() netip.Addr {
	switch r.u32() {
	case 1:
		a, _ := netip.AddrFromSlice(r.bytes(4))
		return a
	case 2:
		a, _ := netip.AddrFromSlice(r.bytes(16))
		return a
	}
	return netip.Addr{}
}

// Decode reads one datagram.
func Decode(b []byte) (*Datagram, error) {
	r := &reader{b: b}
	if v := r.u32(); r.err == nil && v != 5 {
		return nil, fmt.Errorf("sflowdec: version %d, not 5", v)
	}
	d := &Datagram{Agent: r.addr(), SubAgent: r.u32(), Sequence: r.u32(), Uptime: r.u32()}
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		format := r.u32()
		body := &reader{b: r.opaque()}
		if r.err != nil {
			break
		}
		switch format {
		case 1, 2:
			s := Sample{Flow: format == 1, Sequence: body.u32()}
			id := body.u32()
			s.Class, s.Index = id>>24, id&0xffffff
			if s.Flow {
				s.Rate, s.Pool = body.u32(), body.u32()
				s.Drops, s.Input, s.Output = body.u32(), body.u32(), body.u32()
			}
			nr := body.u32()
			for j := uint32(0); j < nr && body.err == nil; j++ {
				rf := body.u32()
				rec := &reader{b: body.opaque()}
				if body.err != nil {
					break
				}
				s.Records = append(s.Records, record(rf, s.Flow, rec))
			}
			if body.err != nil {
				return nil, body.err
			}
			d.Samples = append(d.Samples, s)
		default:
			// Expanded samples (3, 4) and others: not sent by openltm.
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return d, nil
}

func record(format uint32, flow bool, r *reader) Record {
	rec := Record{Format: format}
	add := func(name string, v any) { rec.Fields = append(rec.Fields, Field{name, fmt.Sprint(v)}) }
	str := func(name string) { add(name, string(r.opaque())) }
	switch {
	case flow && format == 2206:
		methods := []string{"OTHER", "OPTIONS", "GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "CONNECT"}
		m := r.u32()
		if int(m) < len(methods) {
			add("method", methods[m])
		} else {
			add("method", m)
		}
		p := r.u32()
		add("protocol", fmt.Sprintf("%d.%d", p/1000, p%1000))
		for _, n := range []string{"uri", "host", "referer", "useragent", "xff", "authuser", "mime_type"} {
			str(n)
		}
		add("req_bytes", r.u64())
		add("resp_bytes", r.u64())
		add("uS", r.u32())
		add("status", int32(r.u32()))
	case flow && format == 1: // sampled_header
		add("header_protocol", r.u32())
		add("frame_length", r.u32())
		add("stripped", r.u32())
		add("header", fmt.Sprintf("%x", r.opaque()))
	case flow && (format == 2100 || format == 2101):
		n := 4
		if format == 2101 {
			n = 16
		}
		add("protocol", r.u32())
		l, _ := netip.AddrFromSlice(r.bytes(n))
		rm, _ := netip.AddrFromSlice(r.bytes(n))
		add("local_ip", l)
		add("remote_ip", rm)
		add("local_port", r.u32())
		add("remote_port", r.u32())
	case !flow && format == 2201:
		for _, n := range []string{"method_option_count", "method_get_count", "method_head_count", "method_post_count",
			"method_put_count", "method_delete_count", "method_trace_count", "method_connect_count", "method_other_count",
			"status_1XX_count", "status_2XX_count", "status_3XX_count", "status_4XX_count", "status_5XX_count", "status_other_count"} {
			add(n, r.u32())
		}
	case !flow && format == 1:
		add("ifIndex", r.u32())
		add("ifType", r.u32())
		add("ifSpeed", r.u64())
		add("ifDirection", r.u32())
		add("ifStatus", r.u32())
		add("ifInOctets", r.u64())
		for _, n := range []string{"ifInUcastPkts", "ifInMulticastPkts", "ifInBroadcastPkts", "ifInDiscards", "ifInErrors", "ifInUnknownProtos"} {
			add(n, r.u32())
		}
		add("ifOutOctets", r.u64())
		for _, n := range []string{"ifOutUcastPkts", "ifOutMulticastPkts", "ifOutBroadcastPkts", "ifOutDiscards", "ifOutErrors", "ifPromiscuousMode"} {
			add(n, r.u32())
		}
	case !flow && format == 5:
		add("vlan_id", r.u32())
		add("octets", r.u64())
		for _, n := range []string{"ucastPkts", "multicastPkts", "broadcastPkts", "discards"} {
			add(n, r.u32())
		}
	case !flow && format == 2000:
		str("hostname")
		r.bytes(16) // uuid
		add("machine_type", r.u32())
		add("os_name", r.u32())
		str("os_release")
	case !flow && format == 2003:
		for _, n := range []string{"load_one", "load_five", "load_fifteen"} {
			add(n, math.Float32frombits(r.u32()))
		}
		for _, n := range []string{"proc_run", "proc_total", "cpu_num", "cpu_speed", "uptime", "cpu_user", "cpu_nice",
			"cpu_system", "cpu_idle", "cpu_wio", "cpu_intr", "cpu_sintr", "interrupts", "contexts"} {
			add(n, r.u32())
		}
	case !flow && format == 2004:
		for _, n := range []string{"mem_total", "mem_free", "mem_shared", "mem_buffers", "mem_cached", "swap_total", "swap_free"} {
			add(n, r.u64())
		}
		for _, n := range []string{"page_in", "page_out", "swap_in", "swap_out"} {
			add(n, r.u32())
		}
	default:
		add("length", len(r.b))
	}
	if r.err != nil {
		add("error", r.err)
	}
	return rec
}

// String writes the sample on one line: its kind, source, sequence and
// each record's fields.
func (s Sample) String() string {
	var b strings.Builder
	if s.Flow {
		fmt.Fprintf(&b, "FLOW source=%d:%d seq=%d rate=%d pool=%d", s.Class, s.Index, s.Sequence, s.Rate, s.Pool)
		if s.Input != 0 || s.Output != 0 {
			fmt.Fprintf(&b, " input=%d output=%d", s.Input, s.Output)
		}
	} else {
		fmt.Fprintf(&b, "COUNTERS source=%d:%d seq=%d", s.Class, s.Index, s.Sequence)
	}
	for _, r := range s.Records {
		fmt.Fprintf(&b, " [%d", r.Format)
		for _, f := range r.Fields {
			fmt.Fprintf(&b, " %s=%q", f.Name, f.Value)
		}
		b.WriteString("]")
	}
	return b.String()
}
