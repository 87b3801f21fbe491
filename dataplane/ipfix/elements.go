// Package ipfix is the exporting side of IPFIX (RFC 7011) and NetFlow
// version 9 (RFC 3954), as BIG-IP's ipfix log destinations and the
// IPFIX:: iRules commands use them: information elements (IANA's, by the
// names iRules write, and the custom ones of `sys ipfix element`),
// templates made from them, records filled field by field, and an
// Exporter per destination that sends templates and data sets to a
// pool's collectors over UDP or TCP, numbers its messages, and sends the
// templates again on UDP every template-retransmit-interval, so that a
// collector that restarted learns them.
package ipfix

import (
	"fmt"
	"sort"
	"strings"
)

// DataType is an information element's abstract data type (RFC 7012
// section 3.1), which says how a value is written on the wire.
type DataType uint8

// The data types of RFC 7012 that BIG-IP's sys ipfix element offers.
const (
	OctetArray DataType = iota
	Unsigned8
	Unsigned16
	Unsigned32
	Unsigned64
	Signed8
	Signed16
	Signed32
	Signed64
	Float32
	Float64
	Boolean
	MACAddress
	String
	DateTimeSeconds
	DateTimeMilliseconds
	DateTimeMicroseconds
	DateTimeNanoseconds
	IPv4Address
	IPv6Address
)

var typeNames = [...]string{
	OctetArray: "octetArray", Unsigned8: "unsigned8", Unsigned16: "unsigned16",
	Unsigned32: "unsigned32", Unsigned64: "unsigned64", Signed8: "signed8",
	Signed16: "signed16", Signed32: "signed32", Signed64: "signed64",
	Float32: "float32", Float64: "float64", Boolean: "boolean",
	MACAddress: "macAddress", String: "string",
	DateTimeSeconds: "dateTimeSeconds", DateTimeMilliseconds: "dateTimeMilliseconds",
	DateTimeMicroseconds: "dateTimeMicroseconds", DateTimeNanoseconds: "dateTimeNanoseconds",
	IPv4Address: "ipv4Address", IPv6Address: "ipv6Address",
}

func (t DataType) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("DataType(%d)", t)
}

// TypeNames lists the data types as tmsh writes them, for the schema's
// enum and for error messages.
func TypeNames() []string { return append([]string(nil), typeNames[:]...) }

// ParseType reads a data type as tmsh and RFC 7012 write it (case aside).
func ParseType(s string) (DataType, error) {
	for i, n := range typeNames {
		if strings.EqualFold(n, s) {
			return DataType(i), nil
		}
	}
	return 0, fmt.Errorf("data-type %q: must be one of %s", s, strings.Join(typeNames[:], ", "))
}

// natural is a type's length on the wire; 0 for the variable-length
// types (string, octetArray).
func (t DataType) natural() int {
	switch t {
	case Unsigned8, Signed8, Boolean:
		return 1
	case Unsigned16, Signed16:
		return 2
	case Unsigned32, Signed32, Float32, DateTimeSeconds, IPv4Address:
		return 4
	case Unsigned64, Signed64, Float64, DateTimeMilliseconds, DateTimeMicroseconds, DateTimeNanoseconds:
		return 8
	case MACAddress:
		return 6
	case IPv6Address:
		return 16
	}
	return 0
}

// Variable is the field length RFC 7011 section 7 writes for a
// variable-length field.
const Variable = 0xFFFF

// Element is an information element: its name (what iRules write), the
// enterprise number (0 for IANA's), its id, its type and the length its
// fields take (Variable for a variable-length string or octetArray).
type Element struct {
	Name       string
	Enterprise uint32
	ID         uint16
	Type       DataType
	Size       uint16
}

// NewElement checks a custom element, as `sys ipfix element` gives it:
// size 0 is the type's natural length (variable for string and
// octetArray); a size other than the natural one is allowed where RFC
// 7011 section 6.2 allows reduced-size encoding (integers, float64 as
// float32) and for string and octetArray, which then take exactly size
// octets.
func NewElement(name string, enterprise uint32, id uint32, t DataType, size uint32) (*Element, error) {
	if id == 0 || id > 0x7FFF {
		return nil, fmt.Errorf("id %d: must be 1 to 32767 (the enterprise bit is set from enterprise-id)", id)
	}
	e := &Element{Name: name, Enterprise: enterprise, ID: uint16(id), Type: t}
	nat := t.natural()
	switch {
	case size == 0 && nat == 0:
		e.Size = Variable
	case size == 0:
		e.Size = uint16(nat)
	case nat == 0:
		if size >= Variable {
			return nil, fmt.Errorf("size %d: must be below 65535", size)
		}
		e.Size = uint16(size)
	case int(size) == nat:
		e.Size = uint16(size)
	case int(size) > nat:
		return nil, fmt.Errorf("size %d: a %s takes at most %d octets", size, t, nat)
	default:
		switch t {
		case Unsigned16, Unsigned32, Unsigned64, Signed16, Signed32, Signed64:
		case Float64:
			if size != 4 {
				return nil, fmt.Errorf("size %d: a float64 is 8 octets, or 4 in reduced-size encoding", size)
			}
		default:
			return nil, fmt.Errorf("size %d: a %s is always %d octets", size, t, nat)
		}
		e.Size = uint16(size)
	}
	return e, nil
}

// iana are the IANA information elements (RFC 7012 and the IANA IPFIX
// registry) that iRules name: the flow keys, counters, times, NAT, HTTP
// and interface elements. Name, id, type.
var iana = []struct {
	name string
	id   uint16
	t    DataType
}{
	{"octetDeltaCount", 1, Unsigned64},
	{"packetDeltaCount", 2, Unsigned64},
	{"deltaFlowCount", 3, Unsigned64},
	{"protocolIdentifier", 4, Unsigned8},
	{"ipClassOfService", 5, Unsigned8},
	{"tcpControlBits", 6, Unsigned16},
	{"sourceTransportPort", 7, Unsigned16},
	{"sourceIPv4Address", 8, IPv4Address},
	{"sourceIPv4PrefixLength", 9, Unsigned8},
	{"ingressInterface", 10, Unsigned32},
	{"destinationTransportPort", 11, Unsigned16},
	{"destinationIPv4Address", 12, IPv4Address},
	{"destinationIPv4PrefixLength", 13, Unsigned8},
	{"egressInterface", 14, Unsigned32},
	{"ipNextHopIPv4Address", 15, IPv4Address},
	{"bgpSourceAsNumber", 16, Unsigned32},
	{"bgpDestinationAsNumber", 17, Unsigned32},
	{"bgpNextHopIPv4Address", 18, IPv4Address},
	{"flowEndSysUpTime", 21, Unsigned32},
	{"flowStartSysUpTime", 22, Unsigned32},
	{"postOctetDeltaCount", 23, Unsigned64},
	{"postPacketDeltaCount", 24, Unsigned64},
	{"minimumIpTotalLength", 25, Unsigned64},
	{"maximumIpTotalLength", 26, Unsigned64},
	{"sourceIPv6Address", 27, IPv6Address},
	{"destinationIPv6Address", 28, IPv6Address},
	{"sourceIPv6PrefixLength", 29, Unsigned8},
	{"destinationIPv6PrefixLength", 30, Unsigned8},
	{"flowLabelIPv6", 31, Unsigned32},
	{"icmpTypeCodeIPv4", 32, Unsigned16},
	{"samplingInterval", 34, Unsigned32},
	{"flowActiveTimeout", 36, Unsigned16},
	{"flowIdleTimeout", 37, Unsigned16},
	{"exportedOctetTotalCount", 40, Unsigned64},
	{"exportedMessageTotalCount", 41, Unsigned64},
	{"exportedFlowRecordTotalCount", 42, Unsigned64},
	{"sourceIPv4Prefix", 44, IPv4Address},
	{"destinationIPv4Prefix", 45, IPv4Address},
	{"minimumTTL", 52, Unsigned8},
	{"maximumTTL", 53, Unsigned8},
	{"fragmentIdentification", 54, Unsigned32},
	{"postIpClassOfService", 55, Unsigned8},
	{"sourceMacAddress", 56, MACAddress},
	{"postDestinationMacAddress", 57, MACAddress},
	{"vlanId", 58, Unsigned16},
	{"postVlanId", 59, Unsigned16},
	{"ipVersion", 60, Unsigned8},
	{"flowDirection", 61, Unsigned8},
	{"ipNextHopIPv6Address", 62, IPv6Address},
	{"bgpNextHopIPv6Address", 63, IPv6Address},
	{"destinationMacAddress", 80, MACAddress},
	{"postSourceMacAddress", 81, MACAddress},
	{"interfaceName", 82, String},
	{"interfaceDescription", 83, String},
	{"octetTotalCount", 85, Unsigned64},
	{"packetTotalCount", 86, Unsigned64},
	{"applicationDescription", 94, String},
	{"applicationId", 95, OctetArray},
	{"applicationName", 96, String},
	{"exporterIPv4Address", 130, IPv4Address},
	{"exporterIPv6Address", 131, IPv6Address},
	{"droppedOctetDeltaCount", 132, Unsigned64},
	{"droppedPacketDeltaCount", 133, Unsigned64},
	{"droppedOctetTotalCount", 134, Unsigned64},
	{"droppedPacketTotalCount", 135, Unsigned64},
	{"flowEndReason", 136, Unsigned8},
	{"commonPropertiesId", 137, Unsigned64},
	{"observationPointId", 138, Unsigned64},
	{"icmpTypeCodeIPv6", 139, Unsigned16},
	{"exportingProcessId", 144, Unsigned32},
	{"templateId", 145, Unsigned16},
	{"flowId", 148, Unsigned64},
	{"observationDomainId", 149, Unsigned32},
	{"flowStartSeconds", 150, DateTimeSeconds},
	{"flowEndSeconds", 151, DateTimeSeconds},
	{"flowStartMilliseconds", 152, DateTimeMilliseconds},
	{"flowEndMilliseconds", 153, DateTimeMilliseconds},
	{"flowStartMicroseconds", 154, DateTimeMicroseconds},
	{"flowEndMicroseconds", 155, DateTimeMicroseconds},
	{"flowStartNanoseconds", 156, DateTimeNanoseconds},
	{"flowEndNanoseconds", 157, DateTimeNanoseconds},
	{"flowStartDeltaMicroseconds", 158, Unsigned32},
	{"flowEndDeltaMicroseconds", 159, Unsigned32},
	{"systemInitTimeMilliseconds", 160, DateTimeMilliseconds},
	{"flowDurationMilliseconds", 161, Unsigned32},
	{"flowDurationMicroseconds", 162, Unsigned32},
	{"observedFlowTotalCount", 163, Unsigned64},
	{"ignoredPacketTotalCount", 164, Unsigned64},
	{"ignoredOctetTotalCount", 165, Unsigned64},
	{"udpSourcePort", 180, Unsigned16},
	{"udpDestinationPort", 181, Unsigned16},
	{"tcpSourcePort", 182, Unsigned16},
	{"tcpDestinationPort", 183, Unsigned16},
	{"tcpSequenceNumber", 184, Unsigned32},
	{"tcpAcknowledgementNumber", 185, Unsigned32},
	{"tcpWindowSize", 186, Unsigned16},
	{"tcpUrgentPointer", 187, Unsigned16},
	{"tcpHeaderLength", 188, Unsigned8},
	{"ipHeaderLength", 189, Unsigned8},
	{"totalLengthIPv4", 190, Unsigned16},
	{"payloadLengthIPv6", 191, Unsigned16},
	{"ipTTL", 192, Unsigned8},
	{"nextHeaderIPv6", 193, Unsigned8},
	{"ipDiffServCodePoint", 195, Unsigned8},
	{"ipPrecedence", 196, Unsigned8},
	{"ipTotalLength", 224, Unsigned64},
	{"postNATSourceIPv4Address", 225, IPv4Address},
	{"postNATDestinationIPv4Address", 226, IPv4Address},
	{"postNAPTSourceTransportPort", 227, Unsigned16},
	{"postNAPTDestinationTransportPort", 228, Unsigned16},
	{"natOriginatingAddressRealm", 229, Unsigned8},
	{"natEvent", 230, Unsigned8},
	{"initiatorOctets", 231, Unsigned64},
	{"responderOctets", 232, Unsigned64},
	{"firewallEvent", 233, Unsigned8},
	{"ingressVRFID", 234, Unsigned32},
	{"egressVRFID", 235, Unsigned32},
	{"VRFname", 236, String},
	{"biflowDirection", 239, Unsigned8},
	{"dot1qVlanId", 243, Unsigned16},
	{"dot1qPriority", 244, Unsigned8},
	{"postNATSourceIPv6Address", 281, IPv6Address},
	{"postNATDestinationIPv6Address", 282, IPv6Address},
	{"initiatorPackets", 298, Unsigned64},
	{"responderPackets", 299, Unsigned64},
	{"observationDomainName", 300, String},
	{"userName", 371, String},
	{"applicationCategoryName", 372, String},
	{"httpStatusCode", 457, Unsigned16},
	{"httpRequestMethod", 459, String},
	{"httpRequestHost", 460, String},
	{"httpRequestTarget", 461, String},
	{"httpMessageVersion", 462, String},
}

// Elements is a set of information elements by name: IANA's and the
// custom ones of a configuration. A set is made per configuration and
// never changed, so lookups take no lock.
type Elements struct {
	byName map[string]*Element
}

var ianaSet = func() map[string]*Element {
	m := make(map[string]*Element, len(iana))
	for _, x := range iana {
		m[x.name] = &Element{Name: x.name, ID: x.id, Type: x.t, Size: sizeOf(x.t)}
	}
	return m
}()

func sizeOf(t DataType) uint16 {
	if n := t.natural(); n > 0 {
		return uint16(n)
	}
	return Variable
}

// IANA is the set of IANA elements alone (no custom elements).
func IANA() *Elements { return &Elements{byName: ianaSet} }

// NewElements is IANA's elements with custom ones added; a custom element
// may not take an IANA element's name (BIG-IP's built-in elements cannot
// be redefined), nor two of them one enterprise and id.
func NewElements(custom []*Element) (*Elements, error) {
	if len(custom) == 0 {
		return IANA(), nil
	}
	m := make(map[string]*Element, len(ianaSet)+len(custom))
	for k, v := range ianaSet {
		m[k] = v
	}
	ids := map[[2]uint32]string{}
	for _, e := range custom {
		if _, ok := ianaSet[e.Name]; ok {
			return nil, fmt.Errorf("%s is an IANA element, which cannot be redefined", e.Name)
		}
		k := [2]uint32{e.Enterprise, uint32(e.ID)}
		if e.Enterprise == 0 {
			return nil, fmt.Errorf("%s: enterprise-id is required for a custom element (0 is IANA's)", e.Name)
		}
		if other, ok := ids[k]; ok {
			return nil, fmt.Errorf("%s: enterprise-id %d id %d is already %s", e.Name, e.Enterprise, e.ID, other)
		}
		ids[k] = e.Name
		m[e.Name] = e
	}
	return &Elements{byName: m}, nil
}

// Lookup finds an element by the name an iRule writes; the names are
// case-sensitive, as IANA's are.
func (s *Elements) Lookup(name string) (*Element, bool) {
	if s == nil {
		e, ok := ianaSet[name]
		return e, ok
	}
	e, ok := s.byName[name]
	return e, ok
}

// Names lists every element's name, sorted.
func (s *Elements) Names() []string {
	m := ianaSet
	if s != nil {
		m = s.byName
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
