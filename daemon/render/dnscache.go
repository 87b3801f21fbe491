package render

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/miekg/dns"

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

// RecordsWriter streams the lines of show ltm dns cache records: a
// heading, the column names before the first row, one line per entry as
// it comes (buffered, never the whole table), and "(no WHAT)" for a
// section without entries. Columns have fixed widths, wider values push
// the line on [M: BIG-IP's layout], since a streamed table cannot be
// measured first.
type RecordsWriter struct {
	w      *bufio.Writer
	cols   []string
	widths []int
	what   string
	rows   int
}

// recordColumns are each section's columns and their widths, and what
// an empty section says it has none of [M].
var recordColumns = map[string]struct {
	cols   []string
	widths []int
	what   string
}{
	"msg":        {[]string{"Name", "Type", "Class", "DO", "Rcode", "TTL", "Bytes"}, []int{32, 6, 5, 3, 8, 7, 5}, "records"},
	"rrset":      {nil, nil, "rrsets"}, // zone file lines, as dig prints them
	"nameserver": {[]string{"Zone", "TTL", "Name Servers", "Addresses"}, []int{24, 7, 32, 0}, "nameservers"},
	"key":        {[]string{"Zone", "Status", "Key Tags", "TTL"}, []int{24, 9, 16, 0}, "keys"},
}

// NewRecordsWriter starts one section (msg, rrset, nameserver or key) of
// the named cache's records.
func NewRecordsWriter(w io.Writer, section, name string, o Options) *RecordsWriter {
	c := recordColumns[section]
	bw := bufio.NewWriterSize(w, 16<<10)
	bw.WriteString("DNS Cache Records: " + o.rel(name) + " (" + section + ")\n")
	return &RecordsWriter{w: bw, cols: c.cols, widths: c.widths, what: c.what}
}

func (r *RecordsWriter) line(cells []string) error {
	var b strings.Builder
	b.WriteString(" ")
	for i, c := range cells {
		b.WriteString(" ")
		b.WriteString(c)
		if i < len(cells)-1 {
			for n := len(c); n < r.widths[i]; n++ {
				b.WriteByte(' ')
			}
			b.WriteString(" ")
		}
	}
	b.WriteString("\n")
	_, err := r.w.WriteString(b.String())
	return err
}

func (r *RecordsWriter) row(cells []string) error {
	if r.rows == 0 && r.cols != nil {
		if err := r.line(r.cols); err != nil {
			return err
		}
	}
	r.rows++
	return r.line(cells)
}

// Message writes one kept answer.
func (r *RecordsWriter) Message(m dnsvs.Record) error {
	do := "no"
	if m.DO {
		do = "yes"
	}
	return r.row([]string{m.Name, m.Type, m.Class, do, m.Rcode, strconv.FormatUint(uint64(m.TTL), 10), strconv.Itoa(m.Bytes)})
}

// RRset writes one record set, a line per record (and RRSIG) as a zone
// file has it with the seconds left as its TTL; a validating resolver's
// sets end with what validation made of them (; secure) [M]. The owner
// is printed in lower case, whatever case the name server echoed.
func (r *RecordsWriter) RRset(s recursor.RRset, validating bool) error {
	r.rows++
	for _, rr := range s.RRs {
		rr = dns.Copy(rr) // shared with the cache
		rr.Header().Ttl = s.TTL
		rr.Header().Name = strings.ToLower(rr.Header().Name) // as asked, in 0x20's mixed case
		line := "  " + rr.String()
		if validating {
			line += "\t; " + s.Security.String()
		}
		if _, err := r.w.WriteString(line + "\n"); err != nil {
			return err
		}
	}
	return nil
}

// Nameserver writes one delegation: the zone, the seconds left, its
// servers' names and the addresses asked.
func (r *RecordsWriter) Nameserver(n recursor.Nameserver) error {
	names, addrs := strings.Join(n.Names, ","), make([]string, len(n.Addrs))
	for i, a := range n.Addrs {
		addrs[i] = a.String()
	}
	if names == "" {
		names = "-"
	}
	return r.row([]string{n.Zone, strconv.FormatUint(uint64(n.TTL), 10), names, strings.Join(addrs, ",")})
}

// Key writes one zone of a validating cache's key cache: what
// validation made of the zone and the tags of its keys.
func (r *RecordsWriter) Key(k recursor.KeyRecord) error {
	tags := make([]string, len(k.KeyTags))
	for i, t := range k.KeyTags {
		tags[i] = strconv.Itoa(int(t))
	}
	if len(tags) == 0 {
		tags = []string{"-"}
	}
	return r.row([]string{k.Zone, k.Security.String(), strings.Join(tags, ","), strconv.FormatUint(uint64(k.TTL), 10)})
}

// Close ends the section (its "(no WHAT)" when it had no entry) and
// flushes.
func (r *RecordsWriter) Close() error {
	if r.rows == 0 {
		r.w.WriteString("  (no " + r.what + ")\n")
	}
	r.w.WriteString("\n")
	return r.w.Flush()
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
		{"Deleted While Waiting", o.num(c.Deleted)},
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
