package daemon

import (
	"context"
	"io"
	"slices"
	"strings"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/dnsvs"
	"github.com/openltm/openltm/dataplane/recursor"
	"github.com/openltm/openltm/objects"
)

// recordKinds are what show and delete ltm dns cache records take after
// records: one of a cache's inner caches, or all of them.
var recordKinds = []string{"msg", "rrset", "nameserver", "key", "all"}

// recordsQuery is one show or delete ltm dns cache records, read.
type recordsQuery struct {
	kind  string // msg, rrset, nameserver, key or all
	cache string // full path
	// validating says the cache is a validating resolver's (its rrsets
	// carry what validation made of them).
	validating bool
	f          recursor.Filter
}

// parseRecords reads `KIND cache NAME [key NAME] [type TYPE]`, the
// options in any order [M: key is the owner name of a record set or
// answer, the zone of a delegation or key; type a record type, taken by
// msg, rrset and all].
func parseRecords(e *Engine, s *Session, words []string) (recordsQuery, error) {
	var q recordsQuery
	usage := "expected msg|rrset|nameserver|key|all cache NAME [key NAME] [type TYPE]"
	if len(words) == 0 || !slices.Contains(recordKinds, words[0]) {
		return q, &objects.SyntaxError{Msg: usage, Expected: recordKinds}
	}
	q.kind = words[0]
	seen := map[string]bool{}
	for i := 1; i < len(words); i += 2 {
		opt := words[i]
		if opt != "cache" && opt != "key" && opt != "type" {
			return q, &objects.SyntaxError{Msg: "\"" + opt + "\" unexpected: " + usage, Expected: []string{"cache", "key", "type"}}
		}
		if i+1 >= len(words) {
			return q, &objects.SyntaxError{Msg: opt + " needs a value: " + usage}
		}
		if seen[opt] {
			return q, &objects.SyntaxError{Msg: opt + " given twice: " + usage}
		}
		seen[opt] = true
		v := words[i+1]
		switch opt {
		case "cache":
			q.cache = objects.FullPath(s.Folder(), v)
		case "key":
			if _, ok := dns.IsDomainName(v); !ok {
				return q, &objects.SyntaxError{Msg: "key " + v + " is not a domain name"}
			}
			q.f.Name = strings.ToLower(dns.Fqdn(v))
		case "type":
			if q.kind == "nameserver" || q.kind == "key" {
				return q, &objects.SyntaxError{Msg: "type is not taken by " + q.kind + " records, only by msg, rrset and all"}
			}
			t, ok := dns.StringToType[strings.ToUpper(v)]
			if !ok || t == dns.TypeNone || t == dns.TypeOPT {
				return q, &objects.SyntaxError{Msg: "type " + v + " is not a record type (A, AAAA, CNAME, MX, NS, ...)"}
			}
			q.f.Type = t
		}
	}
	if q.cache == "" {
		return q, &objects.SyntaxError{Msg: "cache NAME is required: " + usage, Expected: []string{"cache"}}
	}
	cfg := e.Config()
	q.validating = cfg.Get(dnsCacheValidating, q.cache) != nil
	if !q.validating && cfg.Get(dnsCacheTransparent, q.cache) == nil && cfg.Get(dnsCacheResolver, q.cache) == nil {
		return q, objects.NotFound(dnsCacheTransparent, q.cache)
	}
	return q, nil
}

// sections are the inner caches a query covers: all is each in turn,
// without nameservers and keys when a type is given (they have none).
func (q recordsQuery) sections() []string {
	if q.kind != "all" {
		return []string{q.kind}
	}
	if q.f.Type != 0 {
		return []string{"msg", "rrset"}
	}
	return []string{"msg", "rrset", "nameserver", "key"}
}

// dnsRecordsCommands answer show and delete ltm dns cache records: what
// a cache holds, streamed entry by entry, and the entries to forget so
// that the next query for them goes to the network again.
func dnsRecordsCommands(e *Engine, p *dataplane.Plane) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", "ltm dns cache records", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			q, err := parseRecords(e, s, words)
			if err != nil {
				return err
			}
			o := showOpts(s, nil)
			for _, sec := range q.sections() {
				if err := showRecords(ctx, p, q, sec, w, o); err != nil {
					return err
				}
			}
			return nil
		}},
		{"delete", "ltm dns cache records", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			q, err := parseRecords(e, s, words)
			if err != nil {
				return err
			}
			if q.kind == "all" && q.f == (recursor.Filter{}) {
				p.FlushDNSCache(q.cache) // answers, rrsets, delegations, keys and NSEC ranges
				return nil
			}
			for _, sec := range q.sections() {
				p.DeleteDNSCacheRecords(q.cache, sec, q.f)
			}
			return nil
		}},
	}
}

// showRecords streams one section of a cache's records to w.
func showRecords(ctx context.Context, p *dataplane.Plane, q recordsQuery, section string, w io.Writer, o render.Options) error {
	rw := render.NewRecordsWriter(w, section, q.cache, o)
	var werr error
	keep := func(err error) bool {
		if werr = err; werr == nil {
			werr = ctx.Err()
		}
		return werr == nil
	}
	switch section {
	case "msg":
		p.DNSCacheMessages(q.cache, q.f, func(r dnsvs.Record) bool { return keep(rw.Message(r)) })
	case "rrset":
		p.DNSCacheRRsets(q.cache, q.f, func(r recursor.RRset) bool { return keep(rw.RRset(r, q.validating)) })
	case "nameserver":
		p.DNSCacheNameservers(q.cache, q.f, func(n recursor.Nameserver) bool { return keep(rw.Nameserver(n)) })
	case "key":
		for _, k := range p.DNSCacheKeys(q.cache) { // a zone per signed level: few
			if q.f.Name != "" && k.Zone != q.f.Name {
				continue
			}
			if !keep(rw.Key(k)) {
				break
			}
		}
	}
	if cerr := rw.Close(); werr == nil {
		werr = cerr
	}
	return werr
}
