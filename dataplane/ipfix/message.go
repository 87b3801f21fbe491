package ipfix

import (
	"encoding/binary"
	"fmt"
)

// Version is the export protocol: IPFIX (version 10) or NetFlow v9, as a
// destination's protocol-version says.
type Version uint16

const (
	// NetFlowV5 is Cisco's fixed-format version 5: no templates, a
	// 24-octet header and 48-octet records of IPv4 flows; the netflow
	// profile's default (netflow-version version-5).
	NetFlowV5 Version = 5
	// NetFlowV9 is RFC 3954's version 9.
	NetFlowV9 Version = 9
	// IPFIX is RFC 7011's version 10.
	IPFIX Version = 10
)

// ParseVersion reads protocol-version as tmsh writes it.
func ParseVersion(s string) (Version, error) {
	switch s {
	case "ipfix", "":
		return IPFIX, nil
	case "netflow-v9":
		return NetFlowV9, nil
	}
	return 0, fmt.Errorf("protocol-version %q: must be ipfix or netflow-v9", s)
}

func (v Version) String() string {
	switch v {
	case NetFlowV9:
		return "netflow-v9"
	case NetFlowV5:
		return "netflow-v5"
	}
	return "ipfix"
}

// HeaderLen is the message header's length: 16 octets in IPFIX, 20 in
// NetFlow v9, 24 in NetFlow v5.
func (v Version) HeaderLen() int {
	switch v {
	case NetFlowV9:
		return 20
	case NetFlowV5:
		return 24
	}
	return 16
}

// MaxV5Records is how many records a NetFlow v5 message holds at most.
const MaxV5Records = 30

// Set ids: templates and withdrawals (IPFIX 2, NetFlow v9 0); data sets
// carry their template's id.
const (
	ipfixTemplateSet = 2
	v9TemplateSet    = 0
)

// Header is what a message's header says besides its version and length.
type Header struct {
	// ExportTime is the Unix time in seconds.
	ExportTime uint32
	// Sequence: IPFIX and NetFlow v5, the data records sent in the
	// session before this message; NetFlow v9, the packets sent before
	// it.
	Sequence uint32
	// Domain is the observation domain (v9: the source id).
	Domain uint32
	// Uptime is NetFlow v9's and v5's sysUpTime, in milliseconds.
	Uptime uint32
}

// Message builds one export message in a buffer the caller keeps: Begin,
// then templates, withdrawals and data records in order (consecutive ones
// of a kind share a set), then Finish.
type Message struct {
	v       Version
	b       []byte
	set     int // start of the open set; -1 when none
	setID   uint16
	records int // NetFlow v9's count: template and data records
	data    int // data records
}

var zeros [24]byte

// Begin starts a message of version v in buf (its contents are dropped,
// its capacity kept).
func (m *Message) Begin(v Version, buf []byte) {
	m.v = v
	m.b = append(buf[:0], zeros[:v.HeaderLen()]...)
	m.set = -1
	m.records, m.data = 0, 0
}

// Len is the message's length so far, with the open set.
func (m *Message) Len() int { return len(m.b) }

// DataRecords is how many data records the message holds.
func (m *Message) DataRecords() int { return m.data }

func (m *Message) open(id uint16) {
	if m.v == NetFlowV5 {
		return // no sets: records follow the header
	}
	if m.set >= 0 && m.setID == id {
		return
	}
	m.close()
	m.set, m.setID = len(m.b), id
	m.b = append(m.b, byte(id>>8), byte(id), 0, 0)
}

// close ends the open set, writing its length; NetFlow v9 pads it to four
// octets (RFC 3954 section 5.3).
func (m *Message) close() {
	if m.set < 0 {
		return
	}
	if m.v == NetFlowV9 {
		for (len(m.b)-m.set)%4 != 0 {
			m.b = append(m.b, 0)
		}
	}
	binary.BigEndian.PutUint16(m.b[m.set+2:], uint16(len(m.b)-m.set))
	m.set = -1
}

func (m *Message) templateSet() uint16 {
	if m.v == NetFlowV9 {
		return v9TemplateSet
	}
	return ipfixTemplateSet
}

// Template adds t's template record (RFC 7011 section 3.4.1, RFC 3954
// section 5.2). An enterprise element's id has the enterprise bit set
// and its enterprise number after its length in IPFIX; NetFlow v9 has no
// enterprise numbers, and writes its id alone [M].
func (m *Message) Template(t *Template) {
	if m.v == NetFlowV5 {
		return // v5's one record format is fixed
	}
	m.open(m.templateSet())
	m.b = binary.BigEndian.AppendUint16(m.b, t.ID)
	m.b = binary.BigEndian.AppendUint16(m.b, uint16(len(t.Fields)))
	for i := range t.Fields {
		f := &t.Fields[i]
		id, n := f.Elem.ID, f.Len
		if m.v == NetFlowV9 {
			m.b = binary.BigEndian.AppendUint16(m.b, id)
			m.b = binary.BigEndian.AppendUint16(m.b, uint16(f.v9Len()))
			continue
		}
		if f.Elem.Enterprise != 0 {
			id |= 0x8000
		}
		m.b = binary.BigEndian.AppendUint16(m.b, id)
		m.b = binary.BigEndian.AppendUint16(m.b, n)
		if f.Elem.Enterprise != 0 {
			m.b = binary.BigEndian.AppendUint32(m.b, f.Elem.Enterprise)
		}
	}
	m.records++
}

// Withdraw adds a template withdrawal for t (RFC 7011 section 8.1: the
// template id with no fields); IPFIX only, over TCP.
func (m *Message) Withdraw(t *Template) {
	m.open(ipfixTemplateSet)
	m.b = binary.BigEndian.AppendUint16(m.b, t.ID)
	m.b = binary.BigEndian.AppendUint16(m.b, 0)
}

// Data adds a data record of template t, already encoded (Record's
// AppendIPFIX or AppendV9, as the version asks).
func (m *Message) Data(t *Template, rec []byte) {
	m.open(t.ID)
	m.b = append(m.b, rec...)
	m.records++
	m.data++
}

// Finish closes the message and writes its header; the bytes are valid
// until the next Begin.
func (m *Message) Finish(h Header) []byte {
	m.close()
	b := m.b
	binary.BigEndian.PutUint16(b[0:], uint16(m.v))
	if m.v == NetFlowV5 {
		// count, sysUptime, unix_secs, unix_nsecs, flow_sequence,
		// engine_type, engine_id (the domain's low octet [M]),
		// sampling_interval (none).
		binary.BigEndian.PutUint16(b[2:], uint16(m.data))
		binary.BigEndian.PutUint32(b[4:], h.Uptime)
		binary.BigEndian.PutUint32(b[8:], h.ExportTime)
		binary.BigEndian.PutUint32(b[12:], 0)
		binary.BigEndian.PutUint32(b[16:], h.Sequence)
		b[20], b[21] = 0, byte(h.Domain)
		binary.BigEndian.PutUint16(b[22:], 0)
		return b
	}
	if m.v == NetFlowV9 {
		binary.BigEndian.PutUint16(b[2:], uint16(m.records))
		binary.BigEndian.PutUint32(b[4:], h.Uptime)
		binary.BigEndian.PutUint32(b[8:], h.ExportTime)
		binary.BigEndian.PutUint32(b[12:], h.Sequence)
		binary.BigEndian.PutUint32(b[16:], h.Domain)
		return b
	}
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	binary.BigEndian.PutUint32(b[4:], h.ExportTime)
	binary.BigEndian.PutUint32(b[8:], h.Sequence)
	binary.BigEndian.PutUint32(b[12:], h.Domain)
	return b
}
