package sflow

import (
	"bytes"
	"math"
	"net/netip"
	"time"
)

// Record formats (enterprise 0) of the sFlow version 5 and sFlow HTTP and
// Host structures openltm sends.
const (
	formatFlowSample    = 1
	formatCounterSample = 2

	formatHTTPRequest   = 2206 // http_request (flow)
	formatSocketIPv4    = 2100 // extended_socket_ipv4 (flow)
	formatSocketIPv6    = 2101 // extended_socket_ipv6 (flow)
	formatIfCounters    = 1    // generic interface counters
	formatVLANCounters  = 5    // vlan_counters
	formatHostDescr     = 2000 // host_descr
	formatHostCPU       = 2003 // host_cpu
	formatHostMemory    = 2004 // host_memory
	formatHTTPCounters  = 2201 // http_counters
	protoTCP            = 6
	maxURI, maxHost     = 255, 64
	maxReferer, maxUA   = 255, 128
	maxXFF, maxAuthUser = 64, 32
	maxMime             = 64
)

// Data source classes (the top 8 bits of a source id).
const (
	// ClassIfIndex is an interface (ifIndex).
	ClassIfIndex = 0
	// ClassVLAN is a VLAN (smonVlanDataSource).
	ClassVLAN = 1
	// ClassPhysical is a physical entity: the host's counters.
	ClassPhysical = 2
	// ClassLogical is a logical entity: a virtual server's HTTP service.
	ClassLogical = 3
)

// SourceID is a data source's id as samples carry it: the class in the
// top 8 bits, the index in the other 24.
func SourceID(class, index uint32) uint32 { return class<<24 | index&0xffffff }

// HTTP methods as http_request numbers them.
const (
	methodOther = iota
	methodOptions
	methodGet
	methodHead
	methodPost
	methodPut
	methodDelete
	methodTrace
	methodConnect
)

// HTTPSample is one sampled request, as the proxy knows it when its
// answer arrives: the heads as they were read, what was carried, how long
// it took and between whom.
type HTTPSample struct {
	// Request is the request head as the client sent it (request line
	// and header fields); Response the answer's head (its Content-Type
	// is the sample's mime-type).
	Request, Response []byte
	// Status is the answer's status code.
	Status int
	// ReqBytes and RespBytes are the bodies' lengths.
	ReqBytes, RespBytes uint64
	// Duration is from the request's sending to its answer.
	Duration time.Duration
	// Local is the virtual's address the client reached, Remote the
	// client's.
	Local, Remote netip.AddrPort
}

// requestLine splits a request head's first line without allocating.
func requestLine(h []byte) (method, uri, proto []byte) {
	if i := bytes.IndexByte(h, '\n'); i >= 0 {
		h = h[:i]
	}
	h = bytes.TrimRight(h, "\r")
	sp := bytes.IndexByte(h, ' ')
	if sp < 0 {
		return h, nil, nil
	}
	method, h = h[:sp], h[sp+1:]
	if sp = bytes.LastIndexByte(h, ' '); sp >= 0 {
		return method, h[:sp], h[sp+1:]
	}
	return method, h, nil
}

// field is the value of the first header field name (lower case) in the
// head h, without allocating; nil when absent.
func field(h []byte, name string) []byte {
	i := bytes.IndexByte(h, '\n')
	for i >= 0 && i+1 < len(h) {
		h = h[i+1:]
		end := bytes.IndexByte(h, '\n')
		line := h
		if end >= 0 {
			line = h[:end]
		}
		if c := bytes.IndexByte(line, ':'); c == len(name) && asciiEqualFold(line[:c], name) {
			return bytes.TrimSpace(line[c+1:])
		}
		i = end
	}
	return nil
}

func asciiEqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// methodNumber is http_request's number for a method.
func methodNumber(m []byte) uint32 {
	switch string(m) { // (no allocation: the compiler compares in place)
	case "OPTIONS":
		return methodOptions
	case "GET":
		return methodGet
	case "HEAD":
		return methodHead
	case "POST":
		return methodPost
	case "PUT":
		return methodPut
	case "DELETE":
		return methodDelete
	case "TRACE":
		return methodTrace
	case "CONNECT":
		return methodConnect
	}
	return methodOther
}

// protoNumber is http_request's version: major*1000+minor (HTTP/1.1 is
// 1001); 0 when the line names none.
func protoNumber(p []byte) uint32 {
	if len(p) != 8 || !bytes.HasPrefix(p, []byte("HTTP/")) || p[6] != '.' || p[5] < '0' || p[5] > '9' || p[7] < '0' || p[7] > '9' {
		return 0
	}
	return uint32(p[5]-'0')*1000 + uint32(p[7]-'0')
}

// appendHTTPRequest appends the http_request record of s.
func appendHTTPRequest(b []byte, s *HTTPSample) []byte {
	b = appendU32(b, formatHTTPRequest)
	at := len(b)
	b = appendU32(b, 0)
	m, uri, proto := requestLine(s.Request)
	b = appendU32(b, methodNumber(m))
	b = appendU32(b, protoNumber(proto))
	b = appendString(b, uri, maxURI)
	b = appendString(b, field(s.Request, "host"), maxHost)
	b = appendString(b, field(s.Request, "referer"), maxReferer)
	b = appendString(b, field(s.Request, "user-agent"), maxUA)
	b = appendString(b, field(s.Request, "x-forwarded-for"), maxXFF)
	b = appendString(b, nil, maxAuthUser)
	mime := field(s.Response, "content-type")
	b = appendString(b, mime, maxMime)
	b = appendU64(b, s.ReqBytes)
	b = appendU64(b, s.RespBytes)
	us := s.Duration.Microseconds()
	if us < 0 {
		us = 0
	} else if us > math.MaxUint32 {
		us = math.MaxUint32
	}
	b = appendU32(b, uint32(us))
	b = appendU32(b, uint32(int32(s.Status)))
	patchLen(b, at)
	return b
}

// appendSocket appends the extended_socket record of the client's
// connection: local is the virtual's side.
func appendSocket(b []byte, local, remote netip.AddrPort) []byte {
	l, r := local.Addr().Unmap(), remote.Addr().Unmap()
	if l.Is4() && r.Is4() {
		b = appendU32(b, formatSocketIPv4)
		b = appendU32(b, 20)
		b = appendU32(b, protoTCP)
		la, ra := l.As4(), r.As4()
		b = append(b, la[:]...)
		b = append(b, ra[:]...)
	} else {
		b = appendU32(b, formatSocketIPv6)
		b = appendU32(b, 44)
		b = appendU32(b, protoTCP)
		la, ra := l.As16(), r.As16()
		b = append(b, la[:]...)
		b = append(b, ra[:]...)
	}
	b = appendU32(b, uint32(local.Port()))
	return appendU32(b, uint32(remote.Port()))
}

// appendFlowSample appends a flow sample of one request from source id.
func appendFlowSample(b []byte, seq, id, rate, pool uint32, s *HTTPSample) []byte {
	b = appendU32(b, formatFlowSample)
	at := len(b)
	b = appendU32(b, 0)
	b = appendU32(b, seq)
	b = appendU32(b, id)
	b = appendU32(b, rate)
	b = appendU32(b, pool)
	b = appendU32(b, 0) // drops
	b = appendU32(b, 0) // input interface: unknown
	b = appendU32(b, 0) // output interface: unknown
	b = appendU32(b, 2) // records
	b = appendHTTPRequest(b, s)
	b = appendSocket(b, s.Local, s.Remote)
	patchLen(b, at)
	return b
}

// HTTPCounters are a virtual's requests by method and answers by status
// class, as http_counters carries them.
type HTTPCounters struct {
	Options, Get, Head, Post, Put, Delete, Trace, Connect, OtherMethod uint32
	Status1xx, Status2xx, Status3xx, Status4xx, Status5xx, StatusOther uint32
}

// AppendHTTPCounters appends the http_counters record of c.
func AppendHTTPCounters(b []byte, c HTTPCounters) []byte {
	b = appendU32(b, formatHTTPCounters)
	b = appendU32(b, 15*4)
	for _, v := range [...]uint32{c.Options, c.Get, c.Head, c.Post, c.Put, c.Delete, c.Trace, c.Connect, c.OtherMethod,
		c.Status1xx, c.Status2xx, c.Status3xx, c.Status4xx, c.Status5xx, c.StatusOther} {
		b = appendU32(b, v)
	}
	return b
}

// IfCounters are an interface's figures as the generic interface counters
// carry them.
type IfCounters struct {
	Index, Type                                      uint32
	Speed                                            uint64
	Direction, Status                                uint32
	InOctets                                         uint64
	InUcast, InMulticast, InBroadcast, InDiscards    uint32
	InErrors, InUnknownProtos                        uint32
	OutOctets                                        uint64
	OutUcast, OutMulticast, OutBroadcast, OutDiscard uint32
	OutErrors, Promiscuous                           uint32
}

// AppendIfCounters appends the generic interface counters record of c.
func AppendIfCounters(b []byte, c IfCounters) []byte {
	b = appendU32(b, formatIfCounters)
	at := len(b)
	b = appendU32(b, 0)
	b = appendU32(b, c.Index)
	b = appendU32(b, c.Type)
	b = appendU64(b, c.Speed)
	b = appendU32(b, c.Direction)
	b = appendU32(b, c.Status)
	b = appendU64(b, c.InOctets)
	for _, v := range [...]uint32{c.InUcast, c.InMulticast, c.InBroadcast, c.InDiscards, c.InErrors, c.InUnknownProtos} {
		b = appendU32(b, v)
	}
	b = appendU64(b, c.OutOctets)
	for _, v := range [...]uint32{c.OutUcast, c.OutMulticast, c.OutBroadcast, c.OutDiscard, c.OutErrors, c.Promiscuous} {
		b = appendU32(b, v)
	}
	patchLen(b, at)
	return b
}

// Host is the system's figures as host_descr, host_cpu and host_memory
// carry them.
type Host struct {
	Hostname                         string
	Load1, Load5, Load15             float32
	ProcRun, ProcTotal, CPUs, CPUMHz uint32
	Uptime                           uint32 // seconds
	User, Nice, System, Idle, IOWait uint32 // milliseconds
	IRQ, SoftIRQ                     uint32 // milliseconds
	MemTotal, MemFree, Buffers       uint64
	Cached, SwapTotal, SwapFree      uint64
}

// AppendHost appends the host_descr, host_cpu and host_memory records of
// h: three records.
func AppendHost(b []byte, h Host) []byte {
	b = appendU32(b, formatHostDescr)
	at := len(b)
	b = appendU32(b, 0)
	b = appendString(b, []byte(h.Hostname), 64)
	b = append(b, make([]byte, 16)...) // uuid: unknown
	b = appendU32(b, 0)                // machine_type: unknown [M]
	b = appendU32(b, 2)                // os_name: linux
	b = appendString(b, nil, 32)       // os_release
	patchLen(b, at)

	b = appendU32(b, formatHostCPU)
	at = len(b)
	b = appendU32(b, 0)
	b = appendU32(b, math.Float32bits(h.Load1))
	b = appendU32(b, math.Float32bits(h.Load5))
	b = appendU32(b, math.Float32bits(h.Load15))
	for _, v := range [...]uint32{h.ProcRun, h.ProcTotal, h.CPUs, h.CPUMHz, h.Uptime,
		h.User, h.Nice, h.System, h.Idle, h.IOWait, h.IRQ, h.SoftIRQ, 0, 0} {
		b = appendU32(b, v)
	}
	patchLen(b, at)

	b = appendU32(b, formatHostMemory)
	at = len(b)
	b = appendU32(b, 0)
	for _, v := range [...]uint64{h.MemTotal, h.MemFree, 0, h.Buffers, h.Cached, h.SwapTotal, h.SwapFree} {
		b = appendU64(b, v)
	}
	for range 4 {
		b = appendU32(b, 0) // page and swap in/out: not read [M]
	}
	patchLen(b, at)
	return b
}

// VLANCounters are a VLAN's figures as vlan_counters (0:5) carries them.
type VLANCounters struct {
	ID                                    uint32
	Octets                                uint64
	Ucast, Multicast, Broadcast, Discards uint32
}

// AppendVLANCounters appends the vlan_counters record of c.
func AppendVLANCounters(b []byte, c VLANCounters) []byte {
	b = appendU32(b, formatVLANCounters)
	b = appendU32(b, 28)
	b = appendU32(b, c.ID)
	b = appendU64(b, c.Octets)
	for _, v := range [...]uint32{c.Ucast, c.Multicast, c.Broadcast, c.Discards} {
		b = appendU32(b, v)
	}
	return b
}
