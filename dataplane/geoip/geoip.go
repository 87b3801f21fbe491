// Package geoip answers "where is this address" from MaxMind DB (MMDB)
// files: GeoLite2/GeoIP2 City or Country, DB-IP lite, and the ASN or ISP
// databases. BIG-IP ships its own geolocation database; openltm cannot,
// so the operator loads the files they hold and GTM topology, the
// `whereis` iRule command and the shell's lookup all read them here.
package geoip

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oschwald/maxminddb-golang/v2"
	"github.com/oschwald/maxminddb-golang/v2/mmdbdata"
)

// Location is what the loaded databases say about one address. Empty
// strings are unknown; several databases fill it together (the first
// that knows a field wins).
type Location struct {
	Continent   string // two-letter code: AF AN AS EU NA OC SA
	Country     string // ISO 3166-1 alpha-2 code
	CountryName string
	State       string // first subdivision's ISO 3166-2 code (without the country), e.g. "NY"
	StateName   string // first subdivision's English name, e.g. "New York"
	City        string
	Postal      string
	Latitude    float64
	Longitude   float64
	ISP         string
	Org         string
	ASN         uint32
}

// Found says whether any database knew anything of the address, so a
// caller can tell "unknown" from "known to be nowhere in particular".
func (l *Location) Found() bool {
	return l.Continent != "" || l.Country != "" || l.State != "" || l.StateName != "" ||
		l.City != "" || l.ISP != "" || l.Org != "" || l.ASN != 0
}

// Database is one loaded MMDB file. Its content lives in memory (read,
// not mapped), so a reload can drop it while lookups still run on it.
type Database struct {
	Path        string
	Type        string // metadata database_type, e.g. GeoLite2-City
	Built       time.Time
	Nodes       uint // search tree nodes (MMDB keeps no record count)
	IPVersion   uint
	Description string
	Size        int
	r           *maxminddb.Reader
}

// Open loads one MMDB file and checks it is one, so a bad file is refused
// before it replaces the databases in use.
func Open(path string) (*Database, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return OpenBytes(path, b)
}

// OpenBytes is Open on a file already read; path only names it.
func OpenBytes(path string, b []byte) (*Database, error) {
	r, err := maxminddb.OpenBytes(b)
	if err != nil {
		return nil, fmt.Errorf("%s: not a MaxMind DB file: %v", path, err)
	}
	if err := r.Verify(); err != nil {
		return nil, fmt.Errorf("%s: damaged MaxMind DB file: %v", path, err)
	}
	m := r.Metadata
	d := &Database{Path: path, Type: m.DatabaseType, Built: m.BuildTime().UTC(), Nodes: m.NodeCount,
		IPVersion: m.IPVersion, Description: m.Description["en"], Size: len(b), r: r}
	return d, nil
}

// names is a record's `names` map; only English is read (BIG-IP answers
// in English), and a struct instead of a map keeps lookups allocation-free.
type names struct {
	EN string `maxminddb:"en"`
}

type codeNames struct {
	Code    string `maxminddb:"code"`
	ISOCode string `maxminddb:"iso_code"`
	Names   names  `maxminddb:"names"`
}

// firstSubdivision keeps the first (largest) subdivision of the list
// without building a slice.
type firstSubdivision struct {
	codeNames
}

// UnmarshalMaxMindDBCursor reads the subdivisions array, keeping its
// first element, so decoding a City record allocates nothing.
func (f *firstSubdivision) UnmarshalMaxMindDBCursor(c mmdbdata.Cursor) (mmdbdata.Cursor, error) {
	s, err := c.Slice()
	if err != nil {
		return mmdbdata.Cursor{}, mmdbdata.NormalizeUnmarshalError[firstSubdivision](err)
	}
	var next mmdbdata.Cursor
	for {
		i, v, ok := s.Next(next)
		if !ok {
			break
		}
		if i == 0 {
			next, err = f.readOne(v)
		} else {
			next, err = v.Skip()
		}
		if err != nil {
			return mmdbdata.Cursor{}, err
		}
	}
	return s.End()
}

func (f *firstSubdivision) readOne(c mmdbdata.Cursor) (mmdbdata.Cursor, error) {
	m, err := c.Map()
	if err != nil {
		return mmdbdata.Cursor{}, err
	}
	var next mmdbdata.Cursor
	for {
		k, v, ok := m.Next(next)
		if !ok {
			break
		}
		switch string(k) {
		case "iso_code":
			f.ISOCode, next, err = v.ReadString()
		case "names":
			next, err = readEN(v, &f.Names.EN)
		default:
			next, err = v.Skip()
		}
		if err != nil {
			return mmdbdata.Cursor{}, err
		}
	}
	return m.End()
}

// readEN reads a names map's English entry into dst.
func readEN(c mmdbdata.Cursor, dst *string) (mmdbdata.Cursor, error) {
	m, err := c.Map()
	if err != nil {
		return mmdbdata.Cursor{}, err
	}
	var next mmdbdata.Cursor
	for {
		k, v, ok := m.Next(next)
		if !ok {
			break
		}
		if string(k) == "en" {
			*dst, next, err = v.ReadString()
		} else {
			next, err = v.Skip()
		}
		if err != nil {
			return mmdbdata.Cursor{}, err
		}
	}
	return m.End()
}

// record is the union of the City/Country, ASN and ISP layouts.
type record struct {
	Continent         codeNames        `maxminddb:"continent"`
	Country           codeNames        `maxminddb:"country"`
	RegisteredCountry codeNames        `maxminddb:"registered_country"`
	Subdivisions      firstSubdivision `maxminddb:"subdivisions"`
	City              struct {
		Names names `maxminddb:"names"`
	} `maxminddb:"city"`
	Postal struct {
		Code string `maxminddb:"code"`
	} `maxminddb:"postal"`
	Location struct {
		Latitude  float64 `maxminddb:"latitude"`
		Longitude float64 `maxminddb:"longitude"`
	} `maxminddb:"location"`
	ASN uint32 `maxminddb:"autonomous_system_number"`
	ASO string `maxminddb:"autonomous_system_organization"`
	ISP string `maxminddb:"isp"`
	Org string `maxminddb:"organization"`
}

// lookup adds what d knows of a to l, leaving fields l already has.
func (d *Database) lookup(a netip.Addr, rec *record, l *Location) error {
	res := d.r.Lookup(a)
	if !res.Found() {
		return res.Err()
	}
	*rec = record{}
	if err := res.Decode(rec); err != nil {
		return err
	}
	country := rec.Country
	if country.ISOCode == "" {
		country = rec.RegisteredCountry
	}
	fill(&l.Continent, rec.Continent.Code)
	fill(&l.Country, country.ISOCode)
	fill(&l.CountryName, country.Names.EN)
	fill(&l.State, rec.Subdivisions.ISOCode)
	fill(&l.StateName, rec.Subdivisions.Names.EN)
	fill(&l.City, rec.City.Names.EN)
	fill(&l.Postal, rec.Postal.Code)
	if l.Latitude == 0 && l.Longitude == 0 {
		l.Latitude, l.Longitude = rec.Location.Latitude, rec.Location.Longitude
	}
	fill(&l.ISP, rec.ISP)
	if l.ISP == "" {
		fill(&l.ISP, rec.ASO)
	}
	fill(&l.Org, rec.Org)
	if l.Org == "" {
		fill(&l.Org, rec.ASO)
	}
	if l.ASN == 0 {
		l.ASN = rec.ASN
	}
	return nil
}

func fill(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// Set is an immutable group of databases answered together: a City or
// Country one for places, an ASN or ISP one for networks.
type Set struct {
	dbs []*Database
}

// NewSet groups databases; earlier ones win where two know a field.
func NewSet(dbs ...*Database) *Set {
	return &Set{dbs: append([]*Database(nil), dbs...)}
}

// Databases lists the set's files for `show sys geoip`.
func (s *Set) Databases() []*Database {
	if s == nil {
		return nil
	}
	return s.dbs
}

// lookupScratch is a lookup's decode target. The decoder takes it as an
// interface, which would move it to the heap on every lookup; pooled, a
// lookup allocates nothing.
type lookupScratch struct {
	rec record
	loc Location
}

var scratchPool = sync.Pool{New: func() any { return new(lookupScratch) }}

// Lookup fills l with what the set's databases know of a (an IPv4-mapped
// IPv6 address is looked up as IPv4) and reports whether any knew it.
// l is cleared first. A damaged record counts as unknown.
func (s *Set) Lookup(a netip.Addr, l *Location) bool {
	*l = Location{}
	if s == nil || len(s.dbs) == 0 || !a.IsValid() {
		return false
	}
	a = a.Unmap()
	sc := scratchPool.Get().(*lookupScratch)
	sc.loc = Location{}
	for _, d := range s.dbs {
		_ = d.lookup(a, &sc.rec, &sc.loc)
	}
	*l = sc.loc
	scratchPool.Put(sc)
	return l.Found()
}

// Store holds the set in use: lookups read it with one atomic load and a
// reload swaps a new one in, never blocking a lookup.
type Store struct {
	p atomic.Pointer[Set]
}

// Set returns the databases in use (nil when none are loaded).
func (st *Store) Set() *Set {
	if st == nil {
		return nil
	}
	return st.p.Load()
}

// Replace puts s in use; nil unloads every database.
func (st *Store) Replace(s *Set) {
	st.p.Store(s)
}

// Loaded says whether any database is in use, so callers that would act
// differently without one (GTM's never-matching geographic records) can
// ask cheaply.
func (st *Store) Loaded() bool {
	s := st.Set()
	return s != nil && len(s.dbs) > 0
}

// Lookup is Set.Lookup on the set in use; false without databases.
func (st *Store) Lookup(a netip.Addr, l *Location) bool {
	return st.Set().Lookup(a, l)
}

// LoadFiles opens every file and returns them as one set, or the first
// error (naming the file) and no set: a reload is all or nothing.
func LoadFiles(paths []string) (*Set, error) {
	var dbs []*Database
	for _, p := range paths {
		d, err := Open(p)
		if err != nil {
			return nil, err
		}
		dbs = append(dbs, d)
	}
	return NewSet(dbs...), nil
}

// ErrNoDatabase is returned by lookups asked for when nothing is loaded,
// so the shell can say so instead of printing an empty answer.
var ErrNoDatabase = errors.New("no geolocation database is loaded (ltmd --geoip-db FILE, or *.mmdb files in STATE-DIR/geoip/)")
