package render

import (
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/openltm/openltm/dataplane/dnsvs"
	"github.com/openltm/openltm/dataplane/recursor"
)

// DNSCache prints one `Ltm::DNS Cache` block of show ltm dns cache: the
// look-ups the cache answered (hits) and passed on (misses), its message
// cache's fill and churn and, for a resolver that resolves, its
// resolution and its rrset and nameserver caches [M: group and field
// names; a transparent cache has no such groups and they are left out
// rather than shown as zero], and for a validating resolver what
// validation made of its answers and its key cache. kind is transparent,
// resolver or validating-resolver.
func DNSCache(w io.Writer, kind, name string, st dnsvs.CacheStats, o Options) error {
	title := "Ltm::DNS Cache Transparent: "
	switch kind {
	case "resolver":
		title = "Ltm::DNS Cache Resolver: "
	case "validating-resolver":
		title = "Ltm::DNS Cache Validating Resolver: "
	}
	rows := [][2]string{
		{"Queries", ""},
		{"Total", o.num(st.Hits + st.Misses)},
		{"Cache Hits", o.num(st.Hits)},
		{"Cache Misses", o.num(st.Misses)},
		{"Message Cache", ""},
		{"Count", o.num(st.Entries)},
		{"Size (bytes)", o.num(st.Bytes)},
		{"Maximum Size (bytes)", o.num(st.MaxBytes)},
		{"Inserts", o.num(st.Inserts)},
		{"Evictions", o.num(st.Evictions)},
		{"Expired", o.num(st.Expired)},
	}
	if !st.Resolving && kind == "transparent" {
		// rrset-cache-size bounds the records of the kept answers;
		// max-concurrent-udp/tcp the queries out to the pool.
		rows = append(rows, [][2]string{
			{"RRset Cache", ""},
			{"Size (bytes)", o.num(st.RRsetBytes)},
			{"Pool Queries", ""},
			{"Over max-concurrent", o.num(st.Overflows)},
		}...)
	}
	if st.Resolving {
		rows = append(rows, [][2]string{
			{"Resolution", ""},
			{"Queries Sent", o.num(st.Sent)},
			{"Over TCP", o.num(st.SentTCP)},
			{"Referrals", o.num(st.Referrals)},
			{"Name Case Mismatches", o.num(st.Mismatches)},
			{"Failures", o.num(st.Failures)},
			{"RRset Cache", ""},
			{"Count", o.num(st.RRsets)},
			{"Size (bytes)", o.num(st.RRsetBytes)},
			{"Hits", o.num(st.RRsetHits)},
			{"Nameserver Cache", ""},
			{"Zones", o.num(st.Zones)},
			{"Nameservers", o.num(st.Nameservers)},
		}...)
	}
	if st.Validating {
		rows = append(rows, [][2]string{
			{"Validation", ""},
			{"Secure", o.num(st.Secure)},
			{"Insecure", o.num(st.Insecure)},
			{"Bogus", o.num(st.Bogus)},
			{"NSEC3 Iterations Exceeded", o.num(st.NSEC3Limited)},
			{"Aggressive NSEC", ""},
			{"NXDOMAIN", o.num(st.AggressiveNXDOMAIN)},
			{"NODATA", o.num(st.AggressiveNODATA)},
			{"Key Cache", ""},
			{"Zones", o.num(st.Keys)},
			{"Size (bytes)", o.num(st.KeyBytes)},
		}...)
	}
	if st.RPZ {
		// response-policy-zones: the queries a trigger answered, by
		// the policy applied [M: group and field names].
		rows = append(rows, [][2]string{
			{"Response Policy Zones", ""},
			{"Hits", o.num(st.RPZNXDOMAIN + st.RPZNODATA + st.RPZLocalData + st.RPZWalledGarden + st.RPZPassthru + st.RPZDrop + st.RPZTCPOnly)},
			{"NXDOMAIN", o.num(st.RPZNXDOMAIN)},
			{"NODATA", o.num(st.RPZNODATA)},
			{"Local Data", o.num(st.RPZLocalData)},
			{"Walled Garden", o.num(st.RPZWalledGarden)},
			{"Passthru", o.num(st.RPZPassthru)},
			{"Drop", o.num(st.RPZDrop)},
			{"TCP Only", o.num(st.RPZTCPOnly)},
			// the same hits by the trigger that matched [M]
			{"Response Policy Triggers", ""},
			{"Client IP", o.num(st.RPZClientIP)},
			{"QNAME", o.num(st.RPZQNAME)},
			{"Response IP", o.num(st.RPZIP)},
			{"NS Name", o.num(st.RPZNSDNAME)},
			{"NS IP", o.num(st.RPZNSIP)},
		}...)
	}
	return statBlock(w, title+o.rel(name), rows)
}

// DNSCacheRecords prints the answers a cache keeps, one line each
// (show ltm dns cache records msg) [M: BIG-IP's columns].
func DNSCacheRecords(w io.Writer, name string, recs []dnsvs.Record, o Options) error {
	rows := [][]string{{"Name", "Type", "Class", "DO", "Rcode", "TTL", "Bytes"}}
	for _, r := range recs {
		do := "no"
		if r.DO {
			do = "yes"
		}
		rows = append(rows, []string{r.Name, r.Type, r.Class, do, r.Rcode, strconv.FormatUint(uint64(r.TTL), 10), strconv.Itoa(r.Bytes)})
	}
	return cacheTable(w, o.rel(name), "records", rows)
}

// cacheTable prints a DNS cache's heading and its rows (the first the
// column names) in aligned columns, or "(no WHAT)" without rows.
func cacheTable(w io.Writer, name, what string, rows [][]string) error {
	p := &printer{w: w}
	p.f("DNS Cache: %s\n", name)
	if len(rows) <= 1 {
		p.f("  (no %s)\n\n", what)
		return p.err
	}
	if p.err != nil {
		return p.err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		if _, err := io.WriteString(tw, "  "+strings.Join(r, "\t")+"\n"); err != nil {
			return err
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// DNSCacheKeys prints the zones a validating cache keeps keys for, one
// line each (show ltm dns cache records key): what validation made of
// each and the tags of its keys [M: BIG-IP's columns].
func DNSCacheKeys(w io.Writer, name string, keys []recursor.KeyRecord, o Options) error {
	rows := [][]string{{"Zone", "Status", "Key Tags", "TTL"}}
	for _, k := range keys {
		tags := make([]string, len(k.KeyTags))
		for i, t := range k.KeyTags {
			tags[i] = strconv.Itoa(int(t))
		}
		if len(tags) == 0 {
			tags = []string{"-"}
		}
		rows = append(rows, []string{k.Zone, k.Security.String(), strings.Join(tags, ","), strconv.FormatUint(uint64(k.TTL), 10)})
	}
	return cacheTable(w, o.rel(name), "keys", rows)
}

// DNSProfile prints one `Ltm::DNS Profile` block: which step answered
// the queries of the virtuals using the profile, and what Rapid Response
// did [M: group and field names; BIG-IP's DNSSEC and logging counters
// are left out].
func DNSProfile(w io.Writer, name string, c dnsvs.ProfileCounts, o Options) error {
	return statBlock(w, "Ltm::DNS Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Queries", ""},
		{"Total", o.num(c.Queries)},
		{"Malformed", o.num(c.Malformed)},
		{"Answered", ""},
		{"GSLB and DNS Express", o.num(c.GSLB)},
		{"Cache", o.num(c.CacheHits)},
		{"Pool Members", o.num(c.PoolAnswers)},
		{"Unanswered by Pool", o.num(c.NoAnswer)},
		{"Unhandled Query Actions", ""},
		{"Allow", o.num(c.Allow)},
		{"Drop", o.num(c.Drop)},
		{"Reject", o.num(c.Reject)},
		{"Hint", o.num(c.Hint)},
		{"No Error", o.num(c.NoError)},
		{"DNS64", ""},
		{"Synthesized AAAA", o.num(c.DNS64)},
		{"Rapid Response", ""},
		{"Answered", o.num(c.RapidAnswers)},
		{"Last Action Allow", o.num(c.RapidAllow)},
		{"Last Action Drop", o.num(c.RapidDrop)},
		{"Last Action No Error", o.num(c.RapidNoError)},
		{"Last Action NXDOMAIN", o.num(c.RapidNXDomain)},
		{"Last Action Refuse", o.num(c.RapidRefuse)},
		{"Last Action Truncate", o.num(c.RapidTruncate)},
	})
}
