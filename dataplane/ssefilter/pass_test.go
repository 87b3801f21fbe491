package ssefilter

import (
	"strings"
	"testing"
)

// run passes body through a Pass in parts of n bytes.
func run(body string, n int, lim Limits, on func(*Event)) string {
	p := New(lim, on)
	var out []byte
	for i := 0; i < len(body); i += n {
		j := min(i+n, len(body))
		out = p.Write(out, []byte(body[i:j]))
	}
	return string(p.Close(out))
}

func TestPass(t *testing.T) {
	upper := func(e *Event) {
		if v, ok := e.Get("data"); ok {
			e.Set("data", strings.ToUpper(v))
		}
	}
	for _, c := range []struct {
		name, in, want string
		lim            Limits
		on             func(*Event)
	}{
		{"untouched", "event: a\ndata: x\n\n", "event: a\ndata: x\n\n", Limits{}, func(*Event) {}},
		{"set", "event: a\ndata: x\n\n", "event: a\ndata: X\n\n", Limits{}, upper},
		{"crlf", "data: x\r\n\r\ndata: y\r\n\r\n", "data: X\n\ndata: Y\n\n", Limits{}, upper},
		{"cr", "data: x\r\rdata: y\r\r", "data: X\n\ndata: Y\n\n", Limits{}, upper},
		{"multiline", "data: a\ndata: b\n\n", "data: A\ndata: B\n\n", Limits{}, upper},
		{"comment kept", ": hi\ndata: a\n\n", ": hi\ndata: A\n\n", Limits{}, upper},
		{"comment only", ": ping\n\n", ": ping\n\n", Limits{}, func(*Event) { panic("called") }},
		{"remove", "id: 1\ndata: a\n\n", "data: a\n\n", Limits{}, func(e *Event) { e.Remove("id") }},
		{"add", "data: a\n\n", "data: a\nid: 7\n\n", Limits{}, func(e *Event) { e.Set("id", "7") }},
		{"unended", "data: a\n\ndata: b", "data: A\n\ndata: b", Limits{}, upper},
		{"too long", "data: aaaaaaaaaaaaaaaaaaaa\n\ndata: b\n\n", "data: aaaaaaaaaaaaaaaaaaaa\n\ndata: B\n\n", Limits{MaxEvent: 10}, upper},
		{"long name", "dataaaaaa: a\n\ndata: b\n\n", "dataaaaaa: a\n\ndata: B\n\n", Limits{MaxName: 4}, upper},
	} {
		for _, n := range []int{1, 3, 1000} {
			if got := run(c.in, n, c.lim, c.on); got != c.want {
				t.Errorf("%s (parts of %d): got %q, want %q", c.name, n, got, c.want)
			}
		}
	}
}

// TestStreams: each event goes on as soon as its blank line is in.
func TestStreams(t *testing.T) {
	p := New(Limits{}, func(*Event) {})
	if out := p.Write(nil, []byte("data: 1\n\ndata: 2")); string(out) != "data: 1\n\n" {
		t.Fatalf("got %q", out)
	}
	if out := p.Write(nil, []byte("\n\n")); string(out) != "data: 2\n\n" {
		t.Fatalf("got %q", out)
	}
}

func TestGetNames(t *testing.T) {
	var got string
	var names []string
	run("event: e\ndata: a\ndata: b\n\n", 1000, Limits{}, func(e *Event) {
		got, _ = e.Get("data")
		names = e.Names()
	})
	if got != "a\nb" || strings.Join(names, ",") != "event,data" {
		t.Fatalf("got %q %v", got, names)
	}
}
