package rules

import (
	"net/netip"
	"strings"
	"testing"
)

// mapGeo places the addresses it holds and knows nothing of the others.
type mapGeo map[netip.Addr]Geolocation

func (m mapGeo) Whereis(a netip.Addr, g *Geolocation) bool {
	l, ok := m[a]
	*g = l
	return ok
}

func TestWhereis(t *testing.T) {
	geo := mapGeo{
		netip.MustParseAddr("127.8.1.7"): {Continent: "EU", Country: "DE", CountryName: "Germany", State: "BY", StateName: "Bavaria",
			City: "Munich", Postal: "80331", Latitude: 48.1, Longitude: 11.5, ISP: "Example Telekom", Org: "Example Holdings"},
		netip.MustParseAddr("fd00:8:1::1"): {Continent: "NA", Country: "US", StateName: "New York"},
	}
	for _, c := range []struct {
		expr, want, err string
	}{
		{expr: "whereis 127.8.1.7 country", want: "DE"},
		{expr: "whereis 127.8.1.7%3 abbrev", want: "DE"},
		{expr: "whereis 127.8.1.7 continent", want: "EU"},
		{expr: "whereis 127.8.1.7 state", want: "Bavaria"},
		{expr: "whereis 127.8.1.7 state_code", want: "BY"},
		{expr: "whereis 127.8.1.7 country_name", want: "Germany"},
		{expr: "whereis 127.8.1.7 isp", want: "Example Telekom"},
		{expr: "whereis 127.8.1.7 org", want: "Example Holdings"},
		{expr: "whereis 127.8.1.7 latitude", want: "48.1"},
		{expr: "whereis 127.8.1.7 {city} zip longitude", want: "Munich 80331 11.5"},
		{expr: "whereis 127.8.1.7", want: "EU DE Bavaria"},
		{expr: "whereis fd00:8:1::1", want: "NA US {New York}"},
		{expr: "whereis 127.8.9.9 country", want: ""},
		{expr: "whereis 127.8.9.9 latitude", want: ""},
		{expr: "whereis 127.8.9.9", want: "{} {} {}"},
		{expr: "whereis 127.8.9.9 country isp", want: "{} {}"},
		{expr: "whereis 127.8.1.7 planet", err: `bad option "planet"`},
		{expr: "whereis www.example country", err: "is not an IP address"},
		{expr: "whereis", err: "wrong # args"},
	} {
		got, err := evalIn(t, newFakeConn(), &Env{Geo: geo}, ClientAccepted, c.expr)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.expr, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %q %v, want %q", c.expr, got, err, c.want)
		}
	}
	// No database: every address is unknown.
	if got, err := evalIn(t, newFakeConn(), &Env{}, ClientAccepted, "whereis 127.8.1.7 country"); err != nil || got != "" {
		t.Errorf("no geolocator: %q %v", got, err)
	}
}
