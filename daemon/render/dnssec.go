package render

import (
	"fmt"
	"io"
	"time"
)

// DNSSECZoneView is what `show ltm dns dnssec zone` prints of a zone.
type DNSSECZoneView struct {
	Name    string
	Signing bool     // enabled, with at least one enabled key
	DS      []string // the DS records for the parent, presentation form
}

// DNSSECZone prints one `Ltm::DNSSEC Zone` block: whether the zone is
// signed and the DS records its parent must publish [M: BIG-IP's layout;
// BIG-IP lists the DS records with `list ltm dns dnssec zone NAME
// ds-records`-like views; here show prints them].
func DNSSECZone(w io.Writer, z DNSSECZoneView, o Options) error {
	status := "not signed"
	if z.Signing {
		status = "signed"
	}
	rows := [][2]string{{"Status", status}, {"DS Records", ""}}
	for _, ds := range z.DS {
		rows = append(rows, [2]string{"  " + ds, ""})
	}
	return statBlock(w, "Ltm::DNSSEC Zone: "+o.rel(z.Name), rows)
}

// DNSSECGeneration is one generation of a key.
type DNSSECGeneration struct {
	ID      int
	KeyTag  uint16
	Created time.Time
	Expires time.Time // zero: never
	DNSKEY  string
}

// DNSSECKey prints one `Ltm::DNSSEC Key` block: the key's generations,
// with each one's key tag, creation and expiry, and DNSKEY record.
func DNSSECKey(w io.Writer, name string, gens []DNSSECGeneration, o Options) error {
	rows := [][2]string{{"Generations", o.num(uint64(len(gens)))}}
	for _, g := range gens {
		exp := "never"
		if !g.Expires.IsZero() {
			exp = g.Expires.UTC().Format("2006-01-02 15:04:05")
		}
		rows = append(rows,
			[2]string{fmt.Sprintf("Generation %d", g.ID), ""},
			[2]string{"  Key Tag", fmt.Sprint(g.KeyTag)},
			[2]string{"  Created", g.Created.UTC().Format("2006-01-02 15:04:05")},
			[2]string{"  Expires", exp},
			[2]string{"  " + g.DNSKEY, ""})
	}
	return statBlock(w, "Ltm::DNSSEC Key: "+o.rel(name), rows)
}
