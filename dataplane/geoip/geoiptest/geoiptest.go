// Package geoiptest writes small MaxMind DB files from a text spec, so
// tests and transcripts can exercise geolocation without shipping a real
// (licensed) database.
//
// A spec has one network per line, `#` comments, and an optional
// `type NAME` line (database_type, default GeoIP2-City):
//
//	type GeoIP2-City
//	127.8.1.0/24 continent=EU country=DE country-name=Germany state=BY state-name=Bavaria city=Munich
//	127.8.2.0/24 continent=NA country=US state=NY state-name="New York" isp="Example Cable" org=Example asn=64500
//	fd00:8::/32  continent=AS country=JP
//
// The keys are continent, country, country-name, state, state-name, city,
// postal, latitude, longitude, isp, org and asn; each lands where a
// GeoIP2 City, ISP or ASN database keeps it.
package geoiptest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// WriteFile writes the database spec describes to path.
func WriteFile(path, spec string) error {
	b, err := Build(spec)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Build returns the database spec describes, as MMDB bytes.
func Build(spec string) ([]byte, error) {
	typ := "GeoIP2-City"
	type entry struct {
		net *net.IPNet
		rec mmdbtype.Map
	}
	var entries []entry
	for n, line := range strings.Split(spec, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		words, err := split(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n+1, err)
		}
		if words[0] == "type" {
			if len(words) != 2 {
				return nil, fmt.Errorf("line %d: type needs one name", n+1)
			}
			typ = words[1]
			continue
		}
		_, ipn, err := net.ParseCIDR(words[0])
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n+1, err)
		}
		rec, err := record(words[1:])
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n+1, err)
		}
		entries = append(entries, entry{ipn, rec})
	}
	t, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: typ, IncludeReservedNetworks: true,
		Description: map[string]string{"en": "openltm test database"}, RecordSize: 24})
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if err := t.Insert(e.net, e.rec); err != nil {
			return nil, fmt.Errorf("%s: %v", e.net, err)
		}
	}
	var buf bytes.Buffer
	if _, err := t.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func en(s string) mmdbtype.Map {
	return mmdbtype.Map{"en": mmdbtype.String(s)}
}

func record(kvs []string) (mmdbtype.Map, error) {
	rec := mmdbtype.Map{}
	sub := mmdbtype.Map{}
	part := func(key string) mmdbtype.Map {
		m, ok := rec[mmdbtype.String(key)].(mmdbtype.Map)
		if !ok {
			m = mmdbtype.Map{}
			rec[mmdbtype.String(key)] = m
		}
		return m
	}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not key=value", kv)
		}
		switch k {
		case "continent":
			part("continent")["code"] = mmdbtype.String(v)
		case "country":
			part("country")["iso_code"] = mmdbtype.String(v)
		case "country-name":
			part("country")["names"] = en(v)
		case "state":
			sub["iso_code"] = mmdbtype.String(v)
		case "state-name":
			sub["names"] = en(v)
		case "city":
			part("city")["names"] = en(v)
		case "postal":
			part("postal")["code"] = mmdbtype.String(v)
		case "latitude", "longitude":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", k, err)
			}
			part("location")[mmdbtype.String(k)] = mmdbtype.Float64(f)
		case "isp":
			rec["isp"] = mmdbtype.String(v)
		case "org":
			rec["organization"] = mmdbtype.String(v)
			rec["autonomous_system_organization"] = mmdbtype.String(v)
		case "asn":
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("asn: %v", err)
			}
			rec["autonomous_system_number"] = mmdbtype.Uint32(n)
		default:
			return nil, fmt.Errorf("unknown key %q (continent, country, country-name, state, state-name, city, postal, latitude, longitude, isp, org, asn)", k)
		}
	}
	if len(sub) > 0 {
		rec["subdivisions"] = mmdbtype.Slice{sub}
	}
	return rec, nil
}

// split cuts a line into words; a double-quoted part keeps its spaces.
func split(line string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inQ, have := false, false
	for _, r := range line {
		switch {
		case r == '"':
			inQ, have = !inQ, true
		case !inQ && (r == ' ' || r == '\t'):
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if inQ {
		return nil, fmt.Errorf("unterminated quote")
	}
	if have {
		out = append(out, cur.String())
	}
	return out, nil
}
