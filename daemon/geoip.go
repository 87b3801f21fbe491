package daemon

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/openltm/openltm/dataplane/geoip"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// GeoIP is the geolocation databases in use: GTM topology and whereis
// read them, and a test or a reload replaces them.
func (e *Engine) GeoIP() *geoip.Store {
	return &e.rules.rt.geo
}

// geoipPaths are the databases ltmd loads: its --geoip-db files, then
// every *.mmdb in STATE-DIR/geoip, by name.
func (e *Engine) geoipPaths() []string {
	paths := append([]string(nil), e.opts.GeoIPFiles...)
	found, _ := filepath.Glob(filepath.Join(e.opts.StateDir, "geoip", "*.mmdb"))
	sort.Strings(found)
	return append(paths, found...)
}

// loadGeoIP (re)reads the databases. A file that cannot be read leaves
// the databases in use as they were and says which.
func (e *Engine) loadGeoIP() error {
	set, err := geoip.LoadFiles(e.geoipPaths())
	if err != nil {
		return fmt.Errorf("geolocation database %w", err)
	}
	e.GeoIP().Replace(set)
	for _, d := range set.Databases() {
		e.log.Info("geolocation database loaded", "file", d.Path, "type", d.Type, "built", d.Built.Format("2006-01-02"))
	}
	return nil
}

// geoLocator gives rules the engine's databases.
type geoLocator struct{ st *geoip.Store }

// Whereis implements rules.Geolocator.
func (g geoLocator) Whereis(a netip.Addr, out *rules.Geolocation) bool {
	var l geoip.Location
	ok := g.st.Lookup(a, &l)
	*out = rules.Geolocation{Continent: l.Continent, Country: l.Country, CountryName: l.CountryName, State: l.State, StateName: l.StateName,
		City: l.City, Postal: l.Postal, Latitude: l.Latitude, Longitude: l.Longitude, ISP: l.ISP, Org: l.Org}
	return ok
}

// geoipCommands are show sys geoip (the databases loaded), run sys geoip
// lookup ADDRESS (what an address resolves to, as BIG-IP's geoip_lookup
// shell tool prints it) and run sys geoip reload (reread the files after
// replacing them), the last two openltm's.
func geoipCommands(e *Engine) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", "sys geoip", func(_ context.Context, _ *Session, _, words []string, w io.Writer) error {
			if len(words) > 0 {
				return synErr(nil, nil, "show sys geoip takes no options (%q)", words[0])
			}
			return writeGeoIPDatabases(w, e.GeoIP().Set().Databases())
		}},
		{"run", "sys geoip", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			usage := []string{"run sys geoip lookup ADDRESS", "run sys geoip reload"}
			switch {
			case len(words) == 2 && words[0] == "lookup":
				a, err := netip.ParseAddr(strings.SplitN(words[1], "%", 2)[0])
				if err != nil {
					return objects.Invalid("run sys geoip lookup: %q is not an IP address", words[1])
				}
				if !e.GeoIP().Loaded() {
					return objects.Invalid("%v", geoip.ErrNoDatabase)
				}
				var l geoip.Location
				e.GeoIP().Lookup(a, &l)
				return writeGeoIPLookup(w, a, &l)
			case len(words) == 1 && words[0] == "reload":
				if err := e.loadGeoIP(); err != nil {
					return objects.Invalid("%v; the databases in use are kept", err)
				}
				if err := writeGeoIPDatabases(w, e.GeoIP().Set().Databases()); err != nil {
					return err
				}
				if h := e.cluster.Load(); h != nil { // cluster_geoip.go
					note, err := h.publishGeoIP(ctx, s.user)
					if note != "" {
						fmt.Fprintln(w, note)
					}
					return err
				}
				return nil
			case len(words) == 0:
				return synErr(nil, usage, "run sys geoip needs lookup ADDRESS or reload")
			}
			return synErr(nil, usage, "%q unknown operation", strings.Join(words, " "))
		}},
	}
}

func writeGeoIPDatabases(w io.Writer, dbs []*geoip.Database) error {
	if len(dbs) == 0 {
		_, err := fmt.Fprintf(w, "%v\n", geoip.ErrNoDatabase)
		return err
	}
	fmt.Fprint(w, "\n-----------------------------------------------------------------------\nSys::GeoIP Databases\n-----------------------------------------------------------------------\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "File\tType\tBuild Date\tNodes\tSize")
	for _, d := range dbs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", d.Path, d.Type, d.Built.Format("2006-01-02 15:04:05"), d.Nodes, strconv.Itoa(d.Size))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

func writeGeoIPLookup(w io.Writer, a netip.Addr, l *geoip.Location) error {
	coord := func(v float64) string {
		if l.Latitude == 0 && l.Longitude == 0 {
			return ""
		}
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
	asn := ""
	if l.ASN != 0 {
		asn = strconv.FormatUint(uint64(l.ASN), 10)
	}
	for _, kv := range [][2]string{
		{"name", a.String()}, {"continent", l.Continent}, {"country code", l.Country}, {"country name", l.CountryName},
		{"region code", l.State}, {"region name", l.StateName}, {"city", l.City}, {"zip", l.Postal},
		{"latitude", coord(l.Latitude)}, {"longitude", coord(l.Longitude)}, {"isp", l.ISP}, {"org", l.Org}, {"asn", asn},
	} {
		if _, err := fmt.Fprintf(w, "%s = %s\n", kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}
