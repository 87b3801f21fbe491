package rules

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// Geolocation is what a Geolocator knows of an address; empty strings are
// unknown.
type Geolocation struct {
	Continent   string // AF AN AS EU NA OC SA
	Country     string // ISO 3166-1 alpha-2
	CountryName string
	State       string // subdivision code (NY)
	StateName   string // subdivision name (New York)
	City        string
	Postal      string
	Latitude    float64
	Longitude   float64
	ISP         string
	Org         string
}

// Geolocator answers `whereis`. The rules package holds no database: the
// daemon gives the one it loaded, so the interpreter is tested alone.
type Geolocator interface {
	// Whereis fills g with what is known of a, reporting whether anything
	// is; g is cleared first.
	Whereis(a netip.Addr, g *Geolocation) bool
}

func (e *Env) geolocator() Geolocator {
	if e == nil {
		return nil
	}
	return e.Geo
}

// whereisUse is the command's form, for errors.
const whereisUse = "whereis IP ?continent|country|abbrev|country_name|state|state_code|city|zip|latitude|longitude|isp|org ...?"

// cmdWhereis is `whereis IP ?FIELD ...?`: one field's value, or a list of
// the fields asked, in order. Without fields it is the list {continent
// country state} [M]. An address the database does not know, or no
// database, answers empty strings, as BIG-IP answers what its database
// lacks.
func cmdWhereis(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(whereisUse)
	}
	s := strings.TrimSpace(args[1].String())
	if i := strings.IndexByte(s, '%'); i >= 0 { // a route domain
		s = s[:i]
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return tcl.Empty, tcl.Errorf("whereis: %q is not an IP address", args[1].String())
	}
	fields := args[2:]
	for _, f := range fields {
		if _, ok := whereisFields[f.String()]; !ok {
			return tcl.Empty, tcl.Errorf("whereis: bad option %q: must be one of continent, country, abbrev, country_name, state, state_code, city, zip, latitude, longitude, isp, org", f.String())
		}
	}
	var g Geolocation
	if sess := sessionOf(in); sess != nil {
		if geo := sess.prog.env.geolocator(); geo != nil {
			geo.Whereis(a, &g)
		}
	}
	if len(fields) == 0 {
		return tcl.List(tcl.Str(g.Continent), tcl.Str(g.Country), tcl.Str(g.StateName)), nil
	}
	if len(fields) == 1 {
		return tcl.Str(whereisFields[fields[0].String()](&g)), nil
	}
	out := make([]tcl.Value, len(fields))
	for i, f := range fields {
		out[i] = tcl.Str(whereisFields[f.String()](&g))
	}
	return tcl.List(out...), nil
}

func coord(v float64, g *Geolocation) string {
	if g.Latitude == 0 && g.Longitude == 0 {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// whereisFields are the fields whereis answers. country is the ISO code,
// as rules compare it (`[whereis $ip country] eq "US"`); abbrev, BIG-IP
// 9's name for the code, is the same [M]; country_name and state_code are
// openltm's additions. state is the subdivision's name, as GTM's state
// records write it (US/New York) [M].
var whereisFields = map[string]func(g *Geolocation) string{
	"continent":    func(g *Geolocation) string { return g.Continent },
	"country":      func(g *Geolocation) string { return g.Country },
	"abbrev":       func(g *Geolocation) string { return g.Country },
	"country_name": func(g *Geolocation) string { return g.CountryName },
	"state":        func(g *Geolocation) string { return g.StateName },
	"state_code":   func(g *Geolocation) string { return g.State },
	"city":         func(g *Geolocation) string { return g.City },
	"zip":          func(g *Geolocation) string { return g.Postal },
	"latitude":     func(g *Geolocation) string { return coord(g.Latitude, g) },
	"longitude":    func(g *Geolocation) string { return coord(g.Longitude, g) },
	"isp":          func(g *Geolocation) string { return g.ISP },
	"org":          func(g *Geolocation) string { return g.Org },
}
