package tcl

import (
	"strings"
	"testing"
)

func TestStrBytes(t *testing.T) {
	in := NewInterp(NewCommands())
	buf := []byte("www.example.com")
	first := in.StrBytes(buf)
	copy(buf, "xxx")
	if got := first.String(); got != "www.example.com" {
		t.Fatalf("value changed with the host's buffer: %q", got)
	}
	long := []byte(strings.Repeat("a", recentMax+1))
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, ""},
		{"new", []byte("/app/x"), "/app/x"},
		{"repeat", []byte("/app/x"), "/app/x"},
		{"changed buffer", buf, "xxx.example.com"},
		{"long", long, string(long)},
	}
	for _, tc := range tests {
		if got := in.StrBytes(tc.in).String(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	// More distinct strings than remembered: all still come back right.
	for i := range 3 * recentStrings {
		s := strings.Repeat("h", i+1)
		if got := in.StrBytes([]byte(s)).String(); got != s {
			t.Fatalf("got %q, want %q", got, s)
		}
	}
}

func TestStrBytesReusesRecent(t *testing.T) {
	in := NewInterp(NewCommands())
	b := []byte("www.example.com")
	in.StrBytes(b)
	if n := testing.AllocsPerRun(100, func() { in.StrBytes(b) }); n != 0 {
		t.Fatalf("%v allocations for a repeated string, want 0", n)
	}
}
