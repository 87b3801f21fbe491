package ipfix

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Field is one field of a template: an element and the length its values
// take in IPFIX (Variable: a length prefix before each value).
type Field struct {
	Elem *Element
	Len  uint16
	// off is the field's place in a record's fixed part; -1 for a
	// variable-length field, whose value is kept apart.
	off int
	// slot numbers the variable-length fields.
	slot int
}

// V9Len is a variable-length field's length in NetFlow v9, which has no
// variable-length fields: values are cut or padded with zeros to it [M:
// BIG-IP's choice is not documented; 32 octets hold the names and short
// strings iRules send].
const V9Len = 32

func (f *Field) v9Len() int {
	if f.Len == Variable {
		return V9Len
	}
	return int(f.Len)
}

// Template is a template record: an id and its fields in order. It is
// immutable once made; Deleted marks it withdrawn.
type Template struct {
	ID     uint16
	Spec   string
	Fields []Field
	fixed  int
	nvar   int
	// deleted is when IPFIX::template delete withdrew it (unix nanos; 0:
	// in use).
	deleted atomic.Int64
}

// NewTemplate makes a template of the given fields, each of its element's
// length unless Len is set.
func NewTemplate(id uint16, fields []Field) *Template {
	t := &Template{ID: id, Fields: make([]Field, len(fields))}
	names := make([]string, 0, len(fields))
	for i, f := range fields {
		if f.Len == 0 {
			f.Len = f.Elem.Size
		}
		if f.Len == Variable {
			f.off, f.slot = -1, t.nvar
			t.nvar++
		} else {
			f.off = t.fixed
			t.fixed += int(f.Len)
		}
		t.Fields[i] = f
		names = append(names, f.Elem.Name)
	}
	t.Spec = strings.Join(names, " ")
	return t
}

// Deleted reports when the template was withdrawn (zero: it is in use).
func (t *Template) Deleted() time.Time {
	if n := t.deleted.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// field finds the pos'th field (from 0) of the named element.
func (t *Template) field(name string, pos int) (*Field, bool) {
	for i := range t.Fields {
		if t.Fields[i].Elem.Name == name {
			if pos == 0 {
				return &t.Fields[i], true
			}
			pos--
		}
	}
	return nil, false
}

// MaxTemplates bounds the templates one system holds at once (ids 256 to
// 65535 are the data sets' ids).
const MaxTemplates = 65535 - 256

// Templates holds the templates iRules made, by id; one template is made
// per distinct list of elements, so a rule that makes its template per
// connection (rather than once in a static variable) gets the same one
// each time instead of filling the table.
type Templates struct {
	mu     sync.RWMutex
	byKey  map[string]*Template
	byID   map[uint16]*Template
	nextID uint16
}

// NewTemplates makes an empty table.
func NewTemplates() *Templates {
	return &Templates{byKey: map[string]*Template{}, byID: map[uint16]*Template{}, nextID: 256}
}

// Create is IPFIX::template create: spec is the element names separated
// by white space, each found in els.
func (ts *Templates) Create(els *Elements, spec string) (*Template, error) {
	names := strings.Fields(spec)
	if len(names) == 0 {
		return nil, errors.New("IPFIX::template create: the template names no elements")
	}
	if len(names) > 512 {
		return nil, fmt.Errorf("IPFIX::template create: %d elements: a template holds at most 512", len(names))
	}
	var key strings.Builder
	fields := make([]Field, 0, len(names))
	for _, n := range names {
		e, ok := els.Lookup(n)
		if !ok {
			return nil, fmt.Errorf("IPFIX::template create: unknown IPFIX element %q (list sys ipfix element shows the custom ones; IANA's go by their names, such as sourceIPv4Address)", n)
		}
		fields = append(fields, Field{Elem: e})
		fmt.Fprintf(&key, "%s/%d/%d/%d/%d ", e.Name, e.Enterprise, e.ID, e.Type, e.Size)
	}
	k := key.String()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t := ts.byKey[k]; t != nil {
		return t, nil
	}
	if len(ts.byID) >= MaxTemplates {
		return nil, fmt.Errorf("IPFIX::template create: %d templates exist; delete some (IPFIX::template delete)", len(ts.byID))
	}
	id := ts.nextID
	for ts.byID[id] != nil || id < 256 {
		id++
		if id == 0 {
			id = 256
		}
	}
	ts.nextID = id + 1
	if ts.nextID == 0 {
		ts.nextID = 256
	}
	t := NewTemplate(id, fields)
	ts.byKey[k] = t
	ts.byID[id] = t
	return t, nil
}

// Get finds a template by id; a deleted one is not found.
func (ts *Templates) Get(id uint16) (*Template, bool) {
	ts.mu.RLock()
	t, ok := ts.byID[id]
	ts.mu.RUnlock()
	return t, ok
}

// Delete is IPFIX::template delete: the template is withdrawn now, and
// the exporters forget it after their template-delete-delay.
func (ts *Templates) Delete(id uint16) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.byID[id]
	if !ok {
		return false
	}
	delete(ts.byID, id)
	for k, x := range ts.byKey {
		if x == t {
			delete(ts.byKey, k)
		}
	}
	t.deleted.Store(time.Now().UnixNano())
	return true
}

// Record is a data record being filled: a template's fields, each zero
// until set. A Record is reused (Reset), so filling one allocates only
// when a variable-length value outgrows what it held before.
type Record struct {
	t     *Template
	fixed []byte
	vars  [][]byte
}

// Reset empties r for template t.
func (r *Record) Reset(t *Template) {
	r.t = t
	if cap(r.fixed) < t.fixed {
		r.fixed = make([]byte, t.fixed)
	}
	r.fixed = r.fixed[:t.fixed]
	clear(r.fixed)
	if cap(r.vars) < t.nvar {
		r.vars = append(r.vars[:cap(r.vars)], make([][]byte, t.nvar-cap(r.vars))...)
	}
	r.vars = r.vars[:t.nvar]
	for i := range r.vars {
		r.vars[i] = r.vars[i][:0]
	}
}

// Template is the template r is filled for.
func (r *Record) Template() *Template { return r.t }

// Set is IPFIX::msg set: the pos'th field (from 0) of element name takes
// value, written as the element's type asks.
func (r *Record) Set(name string, pos int, value string) error {
	f, ok := r.t.field(name, pos)
	if !ok {
		if pos > 0 {
			if _, ok := r.t.field(name, 0); ok {
				return fmt.Errorf("IPFIX::msg set: the template has no element %s at position %d", name, pos)
			}
		}
		return fmt.Errorf("IPFIX::msg set: the template has no element %s", name)
	}
	if f.off < 0 {
		switch f.Elem.Type {
		case String, OctetArray:
			if len(value) > 65534 {
				return fmt.Errorf("IPFIX::msg set: %s: %d octets: at most 65534", name, len(value))
			}
			r.vars[f.slot] = append(r.vars[f.slot][:0], value...)
			return nil
		}
	}
	dst := r.fixed[f.off : f.off+int(f.Len)]
	if err := encodeValue(dst, f.Elem.Type, value); err != nil {
		return fmt.Errorf("IPFIX::msg set: %s: %v", name, err)
	}
	return nil
}

// encodeValue writes value into dst (the field's length) as type t.
func encodeValue(dst []byte, t DataType, value string) error {
	value = strings.TrimSpace(value)
	switch t {
	case String, OctetArray:
		// A fixed-length string: cut, or padded with zeros.
		n := copy(dst, value)
		clear(dst[n:])
		return nil
	case Unsigned8, Unsigned16, Unsigned32, Unsigned64, DateTimeSeconds, DateTimeMilliseconds:
		u, err := parseUint(value)
		if err != nil {
			return err
		}
		if len(dst) < 8 && u>>(8*len(dst)) != 0 {
			return fmt.Errorf("%s does not fit in %d octets", value, len(dst))
		}
		putUint(dst, u)
	case Signed8, Signed16, Signed32, Signed64:
		i, err := strconv.ParseInt(value, 0, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", value)
		}
		bits := 8 * len(dst)
		if bits < 64 && (i < -(1<<(bits-1)) || i >= 1<<(bits-1)) {
			return fmt.Errorf("%s does not fit in %d octets", value, len(dst))
		}
		putUint(dst, uint64(i))
	case DateTimeMicroseconds, DateTimeNanoseconds:
		// NTP format (RFC 7011 section 6.1.9): seconds since 1900, and a
		// binary fraction; the value is microseconds (nanoseconds) since
		// the Unix epoch.
		u, err := parseUint(value)
		if err != nil {
			return err
		}
		unit := uint64(1e6)
		if t == DateTimeNanoseconds {
			unit = 1e9
		}
		sec, frac := u/unit, u%unit
		binary.BigEndian.PutUint32(dst[0:4], uint32(sec+ntpEpoch))
		f := frac << 32 / unit
		if t == DateTimeMicroseconds {
			f &^= 0x7FF // RFC 7011: the lowest 11 bits are zero
		}
		binary.BigEndian.PutUint32(dst[4:8], uint32(f))
	case Float32, Float64:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", value)
		}
		if len(dst) == 4 {
			binary.BigEndian.PutUint32(dst, math.Float32bits(float32(f)))
		} else {
			binary.BigEndian.PutUint64(dst, math.Float64bits(f))
		}
	case Boolean:
		// RFC 7011 section 6.1.5: true is 1, false is 2.
		switch strings.ToLower(value) {
		case "1", "true", "yes", "on":
			dst[0] = 1
		case "0", "false", "no", "off":
			dst[0] = 2
		default:
			return fmt.Errorf("%q is not a boolean", value)
		}
	case MACAddress:
		var m [6]byte
		parts := strings.FieldsFunc(value, func(r rune) bool { return r == ':' || r == '-' })
		if len(parts) != 6 {
			return fmt.Errorf("%q is not a MAC address", value)
		}
		for i, p := range parts {
			v, err := strconv.ParseUint(p, 16, 8)
			if err != nil {
				return fmt.Errorf("%q is not a MAC address", value)
			}
			m[i] = byte(v)
		}
		copy(dst, m[:])
	case IPv4Address, IPv6Address:
		a, err := parseAddr(value)
		if err != nil {
			return err
		}
		if t == IPv4Address {
			a = a.Unmap()
			if !a.Is4() {
				return fmt.Errorf("%s is not an IPv4 address", value)
			}
			b := a.As4()
			copy(dst, b[:])
		} else {
			// An IPv4 address in an IPv6 element is written mapped
			// (::ffff:a.b.c.d) [M].
			b := a.As16()
			copy(dst, b[:])
		}
	}
	return nil
}

// ntpEpoch is the Unix epoch in NTP seconds (since 1900).
const ntpEpoch = 2208988800

func parseUint(s string) (uint64, error) {
	u, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		if i, err2 := strconv.ParseInt(s, 0, 64); err2 == nil && i < 0 {
			return 0, fmt.Errorf("%s is negative: the element is unsigned", s)
		}
		return 0, fmt.Errorf("%q is not an unsigned integer", s)
	}
	return u, nil
}

// parseAddr reads an address as iRules give them: IP::client_addr may
// carry a route domain (10.0.0.1%2), which IPFIX addresses do not.
func parseAddr(s string) (netip.Addr, error) {
	if i := strings.IndexByte(s, '%'); i >= 0 {
		s = s[:i]
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%q is not an IP address", s)
	}
	return a, nil
}

func putUint(dst []byte, u uint64) {
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = byte(u)
		u >>= 8
	}
}

// AppendIPFIX appends r as an IPFIX data record (RFC 7011 section 7:
// variable-length values after a one-octet length, or 255 and a
// two-octet length from 255 on).
func (r *Record) AppendIPFIX(b []byte) []byte {
	for i := range r.t.Fields {
		f := &r.t.Fields[i]
		if f.off >= 0 {
			b = append(b, r.fixed[f.off:f.off+int(f.Len)]...)
			continue
		}
		v := r.vars[f.slot]
		if len(v) < 255 {
			b = append(b, byte(len(v)))
		} else {
			b = append(b, 255, byte(len(v)>>8), byte(len(v)))
		}
		b = append(b, v...)
	}
	return b
}

// AppendV9 appends r as a NetFlow v9 data record: every field at its
// fixed length, variable-length values cut or padded to V9Len.
func (r *Record) AppendV9(b []byte) []byte {
	for i := range r.t.Fields {
		f := &r.t.Fields[i]
		if f.off >= 0 {
			b = append(b, r.fixed[f.off:f.off+int(f.Len)]...)
			continue
		}
		v := r.vars[f.slot]
		if len(v) > V9Len {
			v = v[:V9Len]
		}
		b = append(b, v...)
		for range V9Len - len(v) {
			b = append(b, 0)
		}
	}
	return b
}

// PutUint writes u into the record's i'th field (its index in the
// template), which must be a fixed-length integer or time: the setter of
// records filled by the dataplane itself, which knows its template's
// layout and must not format numbers as text per connection.
func (r *Record) PutUint(i int, u uint64) {
	f := &r.t.Fields[i]
	putUint(r.fixed[f.off:f.off+int(f.Len)], u)
}

// PutString writes v into the record's i'th field, a variable-length
// string or octetArray (cut at 65534 octets); the record's buffer is
// reused, so a pooled record takes it without allocating.
func (r *Record) PutString(i int, v string) {
	f := &r.t.Fields[i]
	if f.off >= 0 {
		encodeValue(r.fixed[f.off:f.off+int(f.Len)], f.Elem.Type, v)
		return
	}
	r.vars[f.slot] = append(r.vars[f.slot][:0], v[:min(len(v), 65534)]...)
}

// PutAddr writes a into the record's i'th field, an IPv4 or IPv6
// address (an IPv4 address in an IPv6 field is written mapped).
func (r *Record) PutAddr(i int, a netip.Addr) {
	f := &r.t.Fields[i]
	dst := r.fixed[f.off : f.off+int(f.Len)]
	if len(dst) == 4 {
		b := a.Unmap().As4()
		copy(dst, b[:])
		return
	}
	b := a.As16()
	copy(dst, b[:])
}
