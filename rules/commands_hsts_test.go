package rules

import (
	"strings"
	"testing"
)

// hstsFake is an HTTP virtual's connection with the profile's hsts.
type hstsFake struct {
	*httpFake
	h   HSTS
	set int
}

func (f *hstsFake) HTTPHSTS() HSTS     { return f.h }
func (f *hstsFake) SetHTTPHSTS(h HSTS) { f.h, f.set = h, f.set+1 }

func TestHTTPHSTS(t *testing.T) {
	profile := HSTS{Enabled: true, MaxAge: 16070400, IncludeSubdomains: true}
	cases := []struct {
		name string
		h    HSTS
		expr string
		want string // the result, then what the connection's answers get; or "error: ..."
	}{
		{"read", profile, "HTTP::hsts", "max-age=16070400; includeSubDomains|max-age=16070400; includeSubDomains"},
		{"read disabled", HSTS{MaxAge: 300}, "HTTP::hsts", "|"},
		{"mode", profile, "HTTP::hsts mode", "enable|max-age=16070400; includeSubDomains"},
		{"disable", profile, "HTTP::hsts mode disable", "|"},
		{"enable", HSTS{MaxAge: 300}, "HTTP::hsts mode enable", "|max-age=300"},
		{"age", profile, "HTTP::hsts maximum-age 60; HTTP::hsts maximum-age", "60|max-age=60; includeSubDomains"},
		{"subdomains", profile, "HTTP::hsts include-subdomains disable", "|max-age=16070400"},
		{"preload", profile, "HTTP::hsts preload enable; HTTP::hsts preload", "enable|max-age=16070400; includeSubDomains; preload"},
		{"all", HSTS{}, "HTTP::hsts mode enable; HTTP::hsts maximum-age 8600; HTTP::hsts include-subdomains disable; HTTP::hsts preload enable; HTTP::hsts", "max-age=8600; preload|max-age=8600; preload"},
		{"bad age", profile, "HTTP::hsts maximum-age -1", "error: expected a number of seconds"},
		{"age too big", profile, "HTTP::hsts maximum-age 4294967296", "error: expected a number of seconds"},
		{"bad flag", profile, "HTTP::hsts preload yes", "error: must be enable or disable"},
		{"bad setting", profile, "HTTP::hsts max-age 1", "error: wrong # args"},
		{"too many", profile, "HTTP::hsts mode enable now", "error: wrong # args"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &hstsFake{httpFake: newHTTPFake(t, testRequest, testResponse), h: c.h}
			got, err := evalIn(t, f, nil, HTTPRequest, c.expr)
			if want, ok := strings.CutPrefix(c.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, want)
				}
				if f.set != 0 {
					t.Errorf("changed by a refused command: %+v", f.h)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := got + "|" + f.h.Value(); got != c.want {
				t.Errorf("got %q want %q", got, c.want)
			}
		})
	}
	if _, err := evalIn(t, newHTTPFake(t, testRequest, ""), nil, HTTPRequest, "HTTP::hsts"); err == nil {
		t.Error("HTTP::hsts where the connection has no hsts: no error")
	}
}

func TestParseHSTS(t *testing.T) {
	for _, h := range []HSTS{
		{Enabled: true, MaxAge: 16070400, IncludeSubdomains: true},
		{Enabled: true, MaxAge: 0, Preload: true},
		{Enabled: false, MaxAge: 60, IncludeSubdomains: true, Preload: true},
	} {
		on := h
		on.Enabled = true
		if got := ParseHSTS(on.Line(), h.Enabled); got != h {
			t.Errorf("%q: %+v, want %+v", on.Line(), got, h)
		}
	}
	if got := ParseHSTS(nil, false); got != (HSTS{MaxAge: 16070400, IncludeSubdomains: true}) {
		t.Errorf("no line: %+v, want BIG-IP's defaults", got)
	}
}
