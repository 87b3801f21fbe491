package daemon

import (
	"github.com/openltm/openltm/control"
)

// recordsPath is the words before show and delete ltm dns cache
// records' own.
var recordsPath = []string{"ltm", "dns", "cache", "records"}

// completeRecords offers the next word of `records KIND cache NAME [key
// NAME] [type TYPE]`: the kinds, the options not yet given, the caches'
// names after cache and the common record types after type.
func (s *Session) completeRecords(after []string) []control.Suggestion {
	if len(after) == 0 {
		return sugs("Components", map[string]string{
			"msg":        "whole answers kept",
			"rrset":      "record sets kept",
			"nameserver": "delegations a resolver learnt",
			"key":        "DNSSEC keys a validating resolver keeps",
			"all":        "every inner cache",
		})
	}
	rest := after[1:]
	if len(rest)%2 == 1 {
		switch rest[len(rest)-1] {
		case "cache":
			out := s.names(dnsCacheTransparent)
			out = append(out, s.names(dnsCacheResolver)...)
			return append(out, s.names(dnsCacheValidating)...)
		case "type":
			return sugs("Values", map[string]string{"A": "", "AAAA": "", "CNAME": "", "MX": "", "NS": "", "PTR": "", "SOA": "", "SRV": "", "TXT": "", "DS": "", "DNSKEY": ""})
		case "key":
			return []control.Suggestion{{Text: "", Description: "<owner or zone name>", Group: "Values"}}
		}
		return nil
	}
	opts := map[string]string{"cache": "the cache's name", "key": "an owner or zone name"}
	if after[0] != "nameserver" && after[0] != "key" {
		opts["type"] = "a record type"
	}
	for i := 0; i < len(rest); i += 2 {
		delete(opts, rest[i])
	}
	return sugs("Options", opts)
}
