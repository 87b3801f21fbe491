// Package ssefilter reads a text/event-stream body (Server-Sent Events,
// the WHATWG HTML standard's "event stream" format) as it streams and
// hands each event to a callback that may read and change its fields:
// the sse profile's SSE_RESPONSE event. Events pass on as soon as their
// blank line is in; nothing waits for the end of the body.
//
// An event the callback leaves alone passes byte for byte. A changed one
// is written back with LF line ends, one "name: value" line per field
// (a value with line breaks as several lines of its field) and its
// comments where they were [M: F5 does not document how a changed event
// is framed].
package ssefilter

import (
	"bytes"
	"strings"
)

// Field is one line of an event: a field and its value, or a comment
// (a line that starts with a colon; Value is the text after it).
type Field struct {
	Name, Value string
	Comment     bool
}

// Event is one event of the stream, valid during the callback only.
type Event struct {
	Fields   []Field
	modified bool
}

// Get is the value of the field name: its lines' values joined by LF,
// as a browser's EventSource joins data lines; ok false when the event
// has no such field.
func (e *Event) Get(name string) (string, bool) {
	var b strings.Builder
	n := 0
	for _, f := range e.Fields {
		if f.Comment || f.Name != name {
			continue
		}
		if n > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(f.Value)
		n++
	}
	return b.String(), n > 0
}

// Names are the event's field names in order, each once.
func (e *Event) Names() []string {
	var out []string
	for _, f := range e.Fields {
		if !f.Comment && !containsStr(out, f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Set makes value the field name's: its lines replace the field's first
// line (the others are removed), or go at the end of the event when it
// has none.
func (e *Event) Set(name, value string) {
	lines := strings.Split(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(value), "\n")
	at := -1
	out := e.Fields[:0:0]
	for _, f := range e.Fields {
		if !f.Comment && f.Name == name {
			if at < 0 {
				at = len(out)
				for _, l := range lines {
					out = append(out, Field{Name: name, Value: l})
				}
			}
			continue
		}
		out = append(out, f)
	}
	if at < 0 {
		for _, l := range lines {
			out = append(out, Field{Name: name, Value: l})
		}
	}
	e.Fields, e.modified = out, true
}

// Remove takes every line of the field name out of the event; false
// when it had none.
func (e *Event) Remove(name string) bool {
	out := e.Fields[:0]
	found := false
	for _, f := range e.Fields {
		if !f.Comment && f.Name == name {
			found = true
			continue
		}
		out = append(out, f)
	}
	e.Fields = out
	if found {
		e.modified = true
	}
	return found
}

// Limits are the sse profile's bounds.
type Limits struct {
	// MaxEvent is max-buffered-msg-bytes: an event that grows past it
	// passes unchanged, without the callback [M].
	MaxEvent int
	// MaxName is max-field-name-size: an event with a longer field name
	// passes unchanged, without the callback [M].
	MaxName int
}

// Pass is one body's reader. Write and Close append what goes on to dst.
type Pass struct {
	lim      Limits
	on       func(*Event)
	buf      []byte // the event so far
	lineLen  int    // bytes of the current line so far
	afterCR  bool   // the last byte was a CR (a LF after it ends nothing)
	eatLF    bool   // a CR ended an event: a LF next is its line end
	skipping bool   // the event passed MaxEvent: passing as it comes
	lastRaw  bool   // the last event went as it came (its LF with it)
	ev       Event
}

// New is a pass over one body; on runs for each whole event that has
// at least one field (a blank or comment-only event passes unread).
func New(lim Limits, on func(*Event)) *Pass {
	return &Pass{lim: lim, on: on}
}

// Write reads p, the body's next bytes, and appends to dst the events
// it completed (and, past MaxEvent, the bytes as they come).
func (p *Pass) Write(dst, b []byte) []byte {
	for _, c := range b {
		if p.eatLF {
			p.eatLF = false
			if c == '\n' {
				if p.lastRaw {
					dst = append(dst, c)
				}
				continue
			}
		}
		if p.skipping {
			dst = append(dst, c)
		} else {
			p.buf = append(p.buf, c)
		}
		switch c {
		case '\n', '\r':
			if c == '\n' && p.afterCR {
				p.afterCR = false
				continue
			}
			p.afterCR = c == '\r'
			if p.lineLen == 0 {
				if p.skipping {
					p.skipping, p.lastRaw = false, true
				} else {
					dst = p.dispatch(dst)
				}
				if c == '\r' {
					p.eatLF, p.afterCR = true, false
				}
			}
			p.lineLen = 0
		default:
			p.afterCR = false
			p.lineLen++
			if !p.skipping && p.lim.MaxEvent > 0 && len(p.buf) > p.lim.MaxEvent {
				dst = append(dst, p.buf...)
				p.buf = p.buf[:0]
				p.skipping = true
			}
		}
	}
	return dst
}

// Close appends an event the body ended without its blank line,
// unchanged [M: an event not ended is not dispatched, as a browser
// drops it].
func (p *Pass) Close(dst []byte) []byte {
	dst = append(dst, p.buf...)
	p.buf = p.buf[:0]
	return dst
}

// dispatch hands the event in p.buf to the callback and appends it, as
// it came or as changed, to dst.
func (p *Pass) dispatch(dst []byte) []byte {
	raw := p.buf
	p.buf = p.buf[:0]
	p.lastRaw = true
	if !p.parse(raw) || p.on == nil {
		return append(dst, raw...)
	}
	p.ev.modified = false
	p.on(&p.ev)
	if !p.ev.modified {
		return append(dst, raw...)
	}
	p.lastRaw = false
	return appendEvent(dst, &p.ev)
}

// parse reads the event's lines into p.ev; false when the event has no
// field or a field name longer than MaxName.
func (p *Pass) parse(raw []byte) bool {
	p.ev.Fields = p.ev.Fields[:0]
	named := false
	for len(raw) > 0 {
		i := bytes.IndexAny(raw, "\r\n")
		if i < 0 {
			i = len(raw)
		}
		line := raw[:i]
		raw = raw[i:]
		if len(raw) > 1 && raw[0] == '\r' && raw[1] == '\n' {
			raw = raw[2:]
		} else if len(raw) > 0 {
			raw = raw[1:]
		}
		if len(line) == 0 {
			continue
		}
		if line[0] == ':' {
			p.ev.Fields = append(p.ev.Fields, Field{Value: string(line[1:]), Comment: true})
			continue
		}
		name, value := line, []byte(nil)
		if j := bytes.IndexByte(line, ':'); j >= 0 {
			name, value = line[:j], line[j+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		if p.lim.MaxName > 0 && len(name) > p.lim.MaxName {
			return false
		}
		p.ev.Fields = append(p.ev.Fields, Field{Name: string(name), Value: string(value)})
		named = true
	}
	return named
}

// appendEvent writes e back: a line per field, LF line ends, and the
// blank line that ends it.
func appendEvent(dst []byte, e *Event) []byte {
	for _, f := range e.Fields {
		if f.Comment {
			dst = append(dst, ':')
			dst = append(dst, f.Value...)
		} else {
			dst = append(dst, f.Name...)
			dst = append(dst, ':', ' ')
			dst = append(dst, f.Value...)
		}
		dst = append(dst, '\n')
	}
	return append(dst, '\n')
}
