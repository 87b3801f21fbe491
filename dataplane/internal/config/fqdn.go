package config

import "time"

// FQDN is a node written with an fqdn block: it has no address of its own;
// the plane resolves Name and puts one ephemeral node (and, in each pool
// that lists the node, one ephemeral member) in service per address, named
// as BIG-IP names them (_auto_10.1.1.1, _auto_10.1.1.1:80).
type FQDN struct {
	Name string
	// Family is ipv4 or ipv6 ("" is ipv4).
	Family string
	// Interval between queries while the name resolves; 0 follows the
	// records' TTL (`interval ttl`).
	Interval time.Duration
	// DownInterval between queries while resolution fails; 0 is 5 s.
	DownInterval time.Duration
	// Autopopulate puts every address in service; off, one.
	Autopopulate bool
}
