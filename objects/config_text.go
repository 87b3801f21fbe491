package objects

import (
	"strings"
	"sync"

	"github.com/openltm/openltm/grammar"
)

// builtinText declares the parent objects BIG-IP ships with, with F5's
// defaults. They exist from the first start, are never saved and cannot be
// deleted. Those of kinds openltm does not act on (client-ssl, gtm monitor
// bigip, ...) are there so that real configurations referring to them read
// without warnings. The children real files name most (tcp-legacy,
// tcp-*-optimized, f5-tcp-*, optimized-caching, wan-optimized-compression,
// the insecure-compatible ssl profiles, clientssl-secure) carry F5's
// settings where they differ from their parent's: the REST listings of a
// BIG-IP 14.1.2.1 (11.5.3 for the insecure-compatible ssl ones, F5's base
// configuration for clientssl-secure), objects/README.md.
const builtinText = `
ltm monitor tcp /Common/tcp { destination *:* interval 5 timeout 16 time-until-up 0 up-interval 0 manual-resume disabled }
ltm monitor tcp-half-open /Common/tcp_half_open { destination *:* interval 5 timeout 16 time-until-up 0 up-interval 0 manual-resume disabled }
ltm monitor http /Common/http { destination *:* interval 5 timeout 16 time-until-up 0 up-interval 0 manual-resume disabled send "GET /\r\n" }
ltm monitor gateway-icmp /Common/gateway_icmp { destination * interval 5 timeout 16 time-until-up 0 up-interval 0 manual-resume disabled }
ltm profile tcp /Common/tcp { idle-timeout 300 }
ltm profile fastl4 /Common/fastL4 { idle-timeout 300 }
ltm profile http /Common/http { insert-xforwarded-for disabled oneconnect-transformations enabled }
ltm profile one-connect /Common/oneconnect { idle-timeout-override disabled limit-type none max-age 86400 max-reuse 1000 max-size 10000 share-pools disabled source-mask any }
ltm profile mblb /Common/mblb { }
net rate-shaping queue /Common/pfifo { type pfifo }
net rate-shaping queue /Common/sfq { type sfq }
net rate-shaping drop-policy /Common/tail { type tail }
net rate-shaping drop-policy /Common/red { type red }
net rate-shaping drop-policy /Common/fred { type fred }
ltm profile stream /Common/stream { }
ltm profile json /Common/json { }
ltm profile doh-server /Common/doh-server { }
ltm profile doh-proxy /Common/doh-proxy { }
ltm profile xml /Common/xml { }
ltm profile html /Common/html { }
ltm profile mqtt /Common/mqtt { }
ltm profile fix /Common/fix { }
ltm profile diameter /Common/diameter { }
ltm profile rewrite /Common/rewrite { }
ltm profile rewrite /Common/rewrite-uri-translation { defaults-from /Common/rewrite rewrite-mode uri-translation }
ltm profile rewrite /Common/rewrite-portal { defaults-from /Common/rewrite }
ltm persistence source-addr /Common/source_addr { timeout 180 mask none }
ltm persistence cookie /Common/cookie { method insert timeout 180 expiration 0 }
ltm persistence universal /Common/universal { timeout 180 }
ltm profile tcp /Common/f5-tcp-lan { defaults-from /Common/tcp init-cwnd 16 init-rwnd 16 minimum-rto 200 nagle auto proxy-buffer-high 65535 }
ltm profile tcp /Common/f5-tcp-wan { defaults-from /Common/tcp congestion-control woodside delayed-acks disabled minimum-rto 500 nagle auto proxy-buffer-high 262144 proxy-buffer-low 196608 receive-window-size 131072 send-buffer-size 262144 }
ltm profile tcp /Common/f5-tcp-mobile { defaults-from /Common/tcp congestion-control woodside init-cwnd 16 nagle auto proxy-buffer-high 262144 proxy-buffer-low 196608 receive-window-size 131072 send-buffer-size 262144 }
ltm profile tcp /Common/f5-tcp-progressive { defaults-from /Common/tcp auto-proxy-buffer-size enabled auto-receive-window-size enabled auto-send-buffer-size enabled congestion-control woodside init-cwnd 16 init-rwnd 16 nagle auto proxy-buffer-high 262144 proxy-buffer-low 196608 push-flag auto receive-window-size 131072 send-buffer-size 262144 }
ltm profile udp /Common/udp { }
ltm profile udp /Common/udp_gtm_dns { defaults-from /Common/udp idle-timeout immediate datagram-load-balancing enabled }
ltm profile client-ssl /Common/clientssl { cert-key-chain { default { cert /Common/default.crt key /Common/default.key } } }
sys file ssl-cert /Common/default.crt { }
sys file ssl-key /Common/default.key { }
ltm profile server-ssl /Common/serverssl { }
ltm monitor https /Common/https { }
ltm monitor icmp /Common/icmp { }
ltm monitor udp /Common/udp { }
ltm persistence dest-addr /Common/dest_addr { }
ltm persistence ssl /Common/ssl { }
gtm monitor bigip /Common/bigip { }
gtm monitor bigip-link /Common/bigip_link { }
gtm monitor gateway-icmp /Common/gateway_icmp { }
gtm monitor tcp /Common/tcp { }
gtm monitor tcp-half-open /Common/tcp_half_open { }
gtm monitor udp /Common/udp { }
gtm monitor http /Common/http { send "GET /\r\n" }
gtm monitor https /Common/https { send "GET /\r\n" }
gtm monitor http /Common/http_head_f5 { defaults-from /Common/http send "HEAD / HTTP/1.0\r\n\r\n" recv "Server\:" }
gtm monitor https /Common/https_head_f5 { defaults-from /Common/https send "HEAD / HTTP/1.0\r\n\r\n" recv "Server\:" }
cm traffic-group /Common/traffic-group-1 { unit-id 1 }
cm traffic-group /Common/traffic-group-local-only { is-floating false }
auth partition Common { }
sys folder / { }
sys folder /Common { }
sys folder /Common/Drafts { }
sys log-config destination local-syslog /Common/local-syslog { }
ltm policy-strategy /Common/first-match { }
ltm policy-strategy /Common/all-match { }
ltm policy-strategy /Common/best-match { }
ltm eviction-policy /Common/default-eviction-policy { strategies { bias-idle { enabled true } bias-oldest { enabled true } } }
ltm rule /Common/_sys_https_redirect {
    when HTTP_REQUEST {
       HTTP::redirect https://[getfield [HTTP::host] ":" 1][HTTP::uri]
    }
}
ltm profile tcp /Common/tcp-lan-optimized { defaults-from /Common/tcp-legacy early-retransmit disabled ecn disabled enhanced-loss-recovery disabled fast-open disabled init-cwnd 3 init-rwnd 3 proxy-buffer-high 131072 proxy-buffer-low 98304 proxy-options enabled rate-pace disabled slow-start disabled tail-loss-probe disabled }
ltm profile tcp /Common/tcp-wan-optimized { defaults-from /Common/tcp-legacy early-retransmit disabled ecn disabled enhanced-loss-recovery disabled fast-open disabled init-cwnd 3 init-rwnd 3 nagle enabled proxy-buffer-high 131072 proxy-buffer-low 131072 proxy-options enabled rate-pace disabled tail-loss-probe disabled }
ltm profile tcp /Common/tcp-mobile-optimized { defaults-from /Common/tcp-legacy abc disabled delayed-acks disabled early-retransmit disabled ecn enabled enhanced-loss-recovery disabled fast-open disabled init-cwnd 16 init-rwnd 3 nagle enabled proxy-buffer-high 131072 proxy-buffer-low 131072 proxy-options enabled rate-pace disabled receive-window-size 131072 reset-on-timeout disabled send-buffer-size 131072 tail-loss-probe disabled }
ltm profile tcp /Common/tcp-legacy { defaults-from /Common/tcp early-retransmit disabled ecn disabled enhanced-loss-recovery disabled fast-open disabled init-cwnd 3 init-rwnd 3 proxy-options enabled rate-pace disabled tail-loss-probe disabled }
ltm profile http-compression /Common/wan-optimized-compression { defaults-from /Common/httpcompression allow-http-10 enabled buffer-size 131072 gzip-memory-level 16 gzip-window-size 64 }
ltm profile web-acceleration /Common/optimized-caching { defaults-from /Common/webacceleration cache-max-age 86400 cache-object-max-size 2000000 cache-object-min-size 0 cache-size 10 }
ltm profile client-ssl /Common/clientssl-secure { defaults-from /Common/clientssl ciphers ecdhe:rsa:!sslv3:!rc4:!exp:!des options { no-ssl no-tlsv1.3 } renegotiation disabled inherit-certkeychain true }
ltm profile client-ssl /Common/clientssl-insecure-compatible { defaults-from /Common/clientssl ciphers !SSLv2:ALL:!DH:!ADH:!EDH:@SPEED inherit-certkeychain true secure-renegotiation request }
ltm profile server-ssl /Common/serverssl-insecure-compatible { defaults-from /Common/serverssl ciphers !SSLv2:!EXPORT:!DH:RSA+RC4:RSA+AES:RSA+DES:RSA+3DES:ECDHE+AES:ECDHE+3DES:@SPEED secure-renegotiation request }
ltm profile radius /Common/radiusLB-subscriber-aware { defaults-from /Common/radiusLB subscriber-discovery enabled }
ltm profile dhcpv4 /Common/dhcpv4_fwd { defaults-from /Common/dhcpv4 mode forwarding }
ltm profile dhcpv6 /Common/dhcpv6_fwd { defaults-from /Common/dhcpv6 mode forwarding }
ltm monitor http /Common/http_head_f5 { defaults-from /Common/http send "HEAD / HTTP/1.0\r\n\r\n" recv "Server\:" }
ltm monitor https /Common/https_head_f5 { defaults-from /Common/https send "HEAD / HTTP/1.0\r\n\r\n" recv "Server\:" }
ltm monitor https /Common/https_443 { defaults-from /Common/https destination *:443 }
`

// singletonText is the initial state of singleton kinds; unlike built-ins
// they are saved, since users change them.
const singletonText = `
ltm default-node-monitor { rule none }
sys global-settings { hostname openltm.local }
sys ntp { }
sys dns { }
sys syslog { }
ltm global-settings connection { }
ltm global-settings general { }
ltm global-settings traffic-control { }
gtm global-settings load-balancing { }
gtm global-settings metrics { }
gtm global-settings general { }
gtm global-settings metrics-exclusions { }
net self-allow { }
`

// Builtins returns the configuration a new daemon starts from.
func (s *Schema) Builtins() *Config {
	c := NewConfig()
	for i, text := range []string{builtinText + authBuiltinText() + builtinMoreText, singletonText} {
		objs, err := s.ReadConfig("builtin", []byte(text), nil)
		if err != nil {
			panic("objects: built-in configuration does not parse: " + err.Error())
		}
		for _, o := range objs {
			o.BuiltIn = i == 0
			c.Put(o)
		}
	}
	// The built-in parents the text above does not spell out
	// (/Common/dns, /Common/inband, /Common/gre, ...).
	for _, k := range s.kinds {
		if k.Parent != "" && c.Get(k, k.Parent) == nil {
			c.Put(&Object{Kind: k, Name: k.Parent, Props: map[string]*Value{}, BuiltIn: true})
		}
	}
	return c
}

// ReadConfig parses bigip.conf text into objects (not yet validated).
// warn, when set, receives what was kept without being acted on.
func (s *Schema) ReadConfig(filename string, src []byte, warn func(grammar.Pos, string)) ([]*Object, error) {
	return s.ReadConfigIn(filename, src, "/Common", warn)
}

// ReadConfigIn is ReadConfig with relative names taken in folder, for text
// listed from inside a folder (tmsh edit).
func (s *Schema) ReadConfigIn(filename string, src []byte, folder string, warn func(grammar.Pos, string)) ([]*Object, error) {
	l := s.ReadText(filename, src, folder)
	if l.Findings.Refused() == nil {
		l.declarePartitions(s)
	}
	for _, f := range l.Findings {
		if f.Category != Refused {
			if warn != nil {
				warn(f.Pos, f.Msg)
			}
			continue
		}
		if se, ok := f.err.(*SyntaxError); ok && se.Pos.File == "" {
			se.Pos.File = filename
		}
		if f.err != nil {
			return nil, f.err
		}
		return nil, l.Findings.Err(false)
	}
	return l.Objects, nil
}

// Version is written in saved files' header line, which BIG-IP tools expect.
const Version = "15.1.0"

// Text writes the configuration as bigip.conf text: full paths, one
// property per line, built-ins left out unless modified. Loading it back gives the same
// configuration, and saving that gives the same text.
func (c *Config) Text() string {
	var b strings.Builder
	b.WriteString("#TMSH-VERSION: " + Version + "\n\n")
	asShipped := shippedText()
	for _, o := range c.Objects() {
		text := Format(o, PrintOpts{})
		if o.BuiltIn && asShipped[o.Key()] == text {
			continue // as shipped; a modified built-in is saved, as BIG-IP saves it
		}
		b.WriteString(text)
	}
	return b.String()
}

// shippedText is the saved form of each built-in object as shipped.
var shippedText = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, o := range Default.Builtins().objs {
		if o.BuiltIn {
			m[o.Key()] = Format(o, PrintOpts{})
		}
	}
	return m
})

// shipped reports whether o is one of the built-in objects openltm ships
// (modified or not): those cannot be deleted.
func shipped(o *Object) bool {
	_, ok := shippedText()[o.Key()]
	return ok
}
