package rules

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// hslFake records HSL::open and HSL::send.
type hslFake struct {
	opened []string
	sent   []string
}

func (h *hslFake) Open(proto, pool string) (string, error) {
	if pool != "syslog_pool" && pool != "/Common/syslog_pool" {
		return "", fmt.Errorf("no such pool: %s", pool)
	}
	h.opened = append(h.opened, proto+" "+pool)
	return "hsl:" + proto + ":" + pool, nil
}

// OpenPublisher knows one publisher, /Common/remote_pub.
func (h *hslFake) OpenPublisher(name string) (string, error) {
	if name != "remote_pub" && name != "/Common/remote_pub" {
		return "", fmt.Errorf("no such log publisher: %s", name)
	}
	h.opened = append(h.opened, "publisher "+name)
	return "hsl:pub:/Common/remote_pub", nil
}

func (h *hslFake) Send(handle string, data []byte) (bool, error) {
	if !strings.HasPrefix(handle, "hsl:") {
		return false, fmt.Errorf("invalid HSL handle %q", handle)
	}
	h.sent = append(h.sent, handle+" "+string(data))
	return true, nil
}

// publishedEnv is what the published-style rules below expect to find on
// the box: data groups, iFiles, a syslog pool.
func publishedEnv(t testing.TB, logs *logSink, hsl HSL) *Env {
	t.Helper()
	dgs := map[string]*DataGroup{}
	add := func(name string, typ DataGroupType, recs ...Record) {
		dg, err := NewDataGroup("/Common/"+name, typ, recs)
		if err != nil {
			t.Fatal(err)
		}
		dgs["/Common/"+name] = dg
	}
	add("host_pools", DGString, Record{Key: "api.example.com", Value: "api_pool"}, Record{Key: "www.example.com", Value: "web_pool"})
	add("allowed_ips", DGAddress, Record{Key: "127.0.0.0/8"}, Record{Key: "10.0.0.0/8"})
	add("blocked_ips", DGAddress, Record{Key: "192.0.2.0/24"})
	add("uri_redirects", DGString, Record{Key: "/old-app", Value: "https://new.example.com/app"}, Record{Key: "/legacy", Value: "/modern"})
	add("path_pools", DGString, Record{Key: "/app/", Value: "app_pool"}, Record{Key: "/static/", Value: "static_pool"})
	ifiles := map[string]*IFile{
		"/Common/maint.html": NewIFile("/Common/maint.html", "/Common/maint.html", []byte("<html><body><h1>Down for maintenance</h1></body></html>")),
		"/Common/logo.png":   NewIFile("/Common/logo.png", "/Common/logo.png", []byte{0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00}),
	}
	ifiles["/Common/maint.html"].Revision = 3
	ifiles["/Common/maint.html"].Checksum = "SHA1:55:0123"
	full := func(n string) string {
		if strings.HasPrefix(n, "/") {
			return n
		}
		return "/Common/" + n
	}
	return &Env{
		Log:       logs.log,
		LogRemote: func(to netip.AddrPort, f, l string) { logs.log("remote "+to.String()+" "+f, l) },
		DataGroup: func(n string) (*DataGroup, bool) { dg, ok := dgs[full(n)]; return dg, ok },
		IFile:     func(n string) (*IFile, bool) { f, ok := ifiles[full(n)]; return f, ok },
		IFiles:    func() []string { return []string{"/Common/logo.png", "/Common/maint.html"} },
		HSL:       hsl,
	}
}

// publishedRules are iRules written the way people publish them for real
// BIG-IPs (DevCentral code share style: comments, `if {...}{`, class
// lookups, HSL, iFiles), each run against a request on a fake HTTP
// connection. want lists substrings of what the connection did, then
// what was logged, then what HSL sent, in that order.
var publishedRules = []struct {
	name string
	rule string
	// req is the request (testRequest when empty); resp a response for
	// HTTP_RESPONSE handlers.
	req, resp string
	events    []Event
	want      []string
	// unsupported: the rule uses F5 commands openltm lacks and must be
	// kept with a warning (an *UnsupportedError naming this command).
	unsupported string
	// stream: the virtual has a stream profile (without an expression);
	// the record ends with the filter's state.
	stream bool
}{
	{name: "http to https redirect", rule: `
# Redirect every request to HTTPS, keeping host and URI
when HTTP_REQUEST {
    HTTP::redirect https://[getfield [HTTP::host] ":" 1][HTTP::uri]
}`, events: []Event{HTTPRequest}, want: []string{`respond 302`, `Location: https://www.example.com/app/v1/items.json?id=42&lang=en`}},

	{name: "permanent redirect with respond", rule: `when HTTP_REQUEST {
  HTTP::respond 301 Location "https://[HTTP::host][HTTP::uri]" Cache-Control "no-cache"
}`, events: []Event{HTTPRequest}, want: []string{`HTTP/1.0 301 Moved Permanently`, `Location: https://www.example.com:8080/app/v1/items.json`, `Cache-Control: no-cache`}},

	{name: "add www", req: "GET /a HTTP/1.1\r\nHost: example.com\r\n\r\n", rule: `when HTTP_REQUEST {
  if { !([string tolower [HTTP::host]] starts_with "www.") }{
    HTTP::redirect "http://www.[HTTP::host][HTTP::uri]"
  }
}`, events: []Event{HTTPRequest}, want: []string{`Location: http://www.example.com/a`}},

	{name: "uri switch to pools", rule: `when HTTP_REQUEST {
  switch -glob [string tolower [HTTP::path]] {
    "/api/*" { pool api_pool }
    "/app/*" -
    "/application/*" { pool app_pool }
    "*.jpg" - "*.png" - "*.css" { pool static_pool }
    default { pool web_pool }
  }
}`, events: []Event{HTTPRequest}, want: []string{"pool app_pool"}},

	{name: "host to pool via data group", rule: `when HTTP_REQUEST {
  set host [string tolower [getfield [HTTP::host] ":" 1]]
  set p [class match -value $host equals host_pools]
  if { $p ne "" } {
    pool $p
  } else {
    HTTP::respond 404 content "Unknown site"
  }
}`, events: []Event{HTTPRequest}, want: []string{"pool web_pool"}},

	{name: "redirects from a data group", req: "GET /old-app/page?x=1 HTTP/1.1\r\nHost: www.example.com\r\n\r\n", rule: `when HTTP_REQUEST {
  set target [class match -value -- [HTTP::path] starts_with uri_redirects]
  if { $target ne "" } {
    HTTP::respond 301 noserver Location $target
    return
  }
  pool web_pool
}`, events: []Event{HTTPRequest}, want: []string{`HTTP/1.0 301 Moved Permanently`, `Location: https://new.example.com/app`}},

	{name: "longest path prefix pool", req: "GET /static/css/site.css HTTP/1.1\r\nHost: www.example.com\r\n\r\n", rule: `when HTTP_REQUEST {
  if { [class match [HTTP::path] starts_with path_pools] } {
    pool [class match -value [HTTP::path] starts_with path_pools]
  }
}`, events: []Event{HTTPRequest}, want: []string{"pool static_pool"}},

	{name: "x-forwarded headers", rule: `when HTTP_REQUEST {
  HTTP::header remove X-Forwarded-For
  HTTP::header insert X-Forwarded-For [IP::client_addr]
  HTTP::header insert X-Forwarded-Proto "http"
  HTTP::header replace X-Real-IP [IP::remote_addr]
  log local0.debug "xff=[HTTP::header values X-Forwarded-For] count=[HTTP::header count X-Forwarded-For]"
}`, events: []Event{HTTPRequest}, want: []string{`local0.debug Rule /Common/r <HTTP_REQUEST>: xff=127.0.0.9 count=1`}},

	{name: "security headers on responses", resp: "HTTP/1.1 200 OK\r\nServer: Apache/2.4\r\nX-Powered-By: PHP/8\r\nContent-Length: 0\r\n\r\n", rule: `when HTTP_RESPONSE {
  HTTP::header remove Server
  HTTP::header remove X-Powered-By
  if { ![HTTP::header exists Strict-Transport-Security] } {
    HTTP::header insert Strict-Transport-Security "max-age=31536000; includeSubDomains"
  }
  HTTP::header insert X-Frame-Options SAMEORIGIN
  HTTP::header insert X-Content-Type-Options nosniff
  log local0. "headers now: [HTTP::header names]"
}`, events: []Event{HTTPResponse}, want: []string{`headers now: Content-Length Strict-Transport-Security X-Frame-Options X-Content-Type-Options`}},

	{name: "inline maintenance page", rule: `when HTTP_REQUEST {
  if { [active_members web_pool] == 0 } {
    HTTP::respond 503 content {<html><head><title>Maintenance</title></head><body>We'll be back shortly.</body></html>} Content-Type "text/html" Connection close
    return
  }
}`, events: []Event{HTTPRequest}, want: []string{`respond 503 keep=false`, `We'll be back shortly.`}},

	{name: "ifile maintenance page", rule: `when HTTP_REQUEST {
  if { [active_members web_pool] < 1 } {
    HTTP::respond 503 content [ifile get maint.html] "Content-Type" "text/html; charset=utf-8" "Retry-After" "300"
    log local0. "maintenance page rev [ifile revision /Common/maint.html] ([ifile checksum maint.html]) sent to [IP::client_addr]"
  }
}`, events: []Event{HTTPRequest}, want: []string{`Retry-After: 300`, `Down for maintenance`, `maintenance page rev 3 (SHA1:55:0123) sent to 127.0.0.9`}},

	{name: "ifile image and page", req: "GET /maintenance/logo.png HTTP/1.1\r\nHost: www.example.com\r\n\r\n", rule: `when HTTP_REQUEST {
  switch [HTTP::uri] {
    "/maintenance/logo.png" { HTTP::respond 200 content [ifile get "/Common/logo.png"] "Content-Type" "image/png" }
    "/maintenance" { HTTP::respond 200 content [ifile get maint.html] }
    default { pool web_pool }
  }
}`, events: []Event{HTTPRequest}, want: []string{"Content-Type: image/png", "Content-Length: 10\\r\\n\\r\\n\\x89PNG\\r\\n\\x1a\\n\\xff\\x00"}},

	{name: "ifile listall", rule: `when HTTP_REQUEST {
  foreach f [ifile listall] { log local0. "ifile $f size [lindex [ifile attributes $f] 7]" }
}`, events: []Event{HTTPRequest}, want: []string{"ifile /Common/logo.png size 10", "ifile /Common/maint.html size 55"}},

	{name: "hsl request log over udp", resp: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", rule: `when CLIENT_ACCEPTED {
  set hsl [HSL::open -proto UDP -pool syslog_pool]
}
when HTTP_REQUEST {
  set method [HTTP::method]
  set uri [HTTP::uri]
  set host [HTTP::host]
}
when HTTP_RESPONSE {
  HSL::send $hsl "<190> [IP::client_addr] $method $host $uri [HTTP::status]\n"
}`, events: []Event{ClientAccepted, HTTPRequest, HTTPResponse}, want: []string{"hsl:UDP:syslog_pool <190> 127.0.0.9 GET www.example.com:8080 /app/v1/items.json?id=42&lang=en 200\n"}},

	{name: "hsl over tcp with timing", resp: "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", rule: `when HTTP_REQUEST {
  set t0 [clock clicks -milliseconds]
  set hsl [HSL::open -proto TCP -pool /Common/syslog_pool]
}
when HTTP_RESPONSE {
  set elapsed [expr {[clock clicks -milliseconds] - $t0}]
  if { $elapsed >= 0 } {
    HSL::send $hsl "status=[HTTP::status] client=[IP::client_addr]\n"
  }
}`, events: []Event{HTTPRequest, HTTPResponse}, want: []string{"hsl:TCP:/Common/syslog_pool status=404 client=127.0.0.9\n"}},

	{name: "allow list", rule: `when CLIENT_ACCEPTED {
  if { ![class match [IP::client_addr] equals allowed_ips] } {
    log local0.warn "rejected [IP::client_addr]"
    reject
  }
}
when HTTP_REQUEST {
  if { [class match [IP::client_addr] equals blocked_ips] } { HTTP::respond 403 content "Forbidden" }
}`, events: []Event{ClientAccepted, HTTPRequest}, want: nil},

	{name: "admin only from internal networks", req: "GET /admin/users HTTP/1.1\r\nHost: www.example.com\r\n\r\n", rule: `when HTTP_REQUEST {
  if { [string tolower [HTTP::path]] starts_with "/admin" } {
    if { not ([IP::addr [IP::client_addr] equals 10.0.0.0/8] or [IP::addr [IP::client_addr] equals 192.168.0.0/16]) } {
      HTTP::respond 403 content "Access denied\r\n" Content-Type text/plain
      return
    }
  }
  pool web_pool
}`, events: []Event{HTTPRequest}, want: []string{`respond 403`, `Access denied`}},

	{name: "basic auth user from header", rule: `when HTTP_REQUEST {
  set auth [HTTP::header Authorization]
  if { $auth starts_with "Basic " } {
    set creds [b64decode [string range $auth 6 end]]
    set user [lindex [split $creds ":"] 0]
    if { $user ne [HTTP::username] } { reject }
    HTTP::header insert X-Remote-User $user
    log local0. "user $user"
  } else {
    HTTP::respond 401 WWW-Authenticate "Basic realm=\"app\""
  }
}`, events: []Event{HTTPRequest}, want: []string{"user alice"}},

	{name: "md5 signed link", req: "GET /download/report.pdf?expires=1900000000&sig=SIG HTTP/1.1\r\nHost: files.example.com\r\n\r\n", rule: `when RULE_INIT {
  set static::secret "s3cr3t"
}
when HTTP_REQUEST {
  set expires [URI::query [HTTP::uri] expires]
  set sig [URI::query [HTTP::uri] sig]
  set want [b64encode [md5 "[HTTP::path]$expires$static::secret"]]
  if { $sig ne $want } {
    log local0. "bad signature for [HTTP::path]: want $want"
    HTTP::respond 403 content "link expired or invalid"
  }
}`, events: []Event{RuleInit, HTTPRequest}, want: []string{"respond 403", "link expired or invalid", "bad signature for /download/report.pdf: want "}},

	{name: "token from sha256", rule: `when HTTP_REQUEST {
  set token [binary encode hex [sha256 "[IP::client_addr]|[HTTP::header User-Agent]"]]
  HTTP::header insert X-Client-Token [string range $token 0 15]
  log local0. "token [string length $token]"
}`, events: []Event{HTTPRequest}, want: []string{"token 64"}},

	{name: "cookie selects pool", req: "GET / HTTP/1.1\r\nHost: www.example.com\r\nCookie: backend=beta; other=1\r\n\r\n", rule: `when HTTP_REQUEST {
  if { [HTTP::cookie exists backend] } {
    switch [HTTP::cookie value backend] {
      beta { pool beta_pool }
      default { pool web_pool }
    }
  }
}`, events: []Event{HTTPRequest}, want: []string{"pool beta_pool"}},

	{name: "canary by hash", rule: `when HTTP_REQUEST {
  set bucket [expr {[crc32 [IP::client_addr]] % 100}]
  if { $bucket < 10 }{ pool canary_pool } else { pool web_pool }
}`, events: []Event{HTTPRequest}, want: []string{"pool "}},

	{name: "strip prefix", rule: `when HTTP_REQUEST {
  if { [HTTP::uri] starts_with "/app/" } {
    HTTP::uri [string map {"/app/" "/"} [HTTP::uri]]
    log local0. "now [HTTP::uri]"
    pool app_pool
  }
}`, events: []Event{HTTPRequest}, want: []string{"pool app_pool", "now /v1/items.json?id=42&lang=en"}},

	{name: "cors preflight", req: "OPTIONS /api/x HTTP/1.1\r\nHost: api.example.com\r\nOrigin: https://app.example.com\r\n\r\n", rule: `when HTTP_REQUEST {
  if { [HTTP::method] eq "OPTIONS" && [HTTP::header exists Origin] } {
    HTTP::respond 200 Access-Control-Allow-Origin [HTTP::header Origin] Access-Control-Allow-Methods "GET, POST, OPTIONS" Access-Control-Max-Age 86400
  }
}`, events: []Event{HTTPRequest}, want: []string{"Access-Control-Allow-Origin: https://app.example.com", "Access-Control-Max-Age: 86400"}},

	{name: "sorry page on lb failure", rule: `when LB_FAILED {
  if { ![HTTP::has_responded] } {
    HTTP::respond 503 content "<html><body>Sorry, try again later.</body></html>" Content-Type text/html
    log local0.err "no member for [HTTP::host][HTTP::uri]"
  }
}`, events: []Event{LBFailed}, want: []string{"Sorry, try again later.", "local0.err Rule /Common/r <LB_FAILED>: no member for www.example.com:8080/app/v1/items.json"}},

	{name: "mobile redirect", req: "GET /shop HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: Mozilla/5.0 (iPhone; CPU iPhone OS 17_0)\r\n\r\n", rule: `when HTTP_REQUEST {
  switch -glob [string tolower [HTTP::header User-Agent]] {
    "*iphone*" - "*android*" - "*mobile*" {
      HTTP::redirect "https://m.example.com[HTTP::uri]"
    }
  }
}`, events: []Event{HTTPRequest}, want: []string{"Location: https://m.example.com/shop"}},

	{name: "persist on query parameter", req: "GET /cart?sessionid=ABC123 HTTP/1.1\r\nHost: www.example.com\r\n\r\n", rule: `when HTTP_REQUEST {
  set sid [URI::query [HTTP::uri] sessionid]
  if { $sid ne "" } { persist uie $sid 3600 } else { persist none }
}`, events: []Event{HTTPRequest}, want: []string{`persist m2 "ABC123" 1h0m0s`}},

	{name: "rate limit with the session table", rule: `when HTTP_REQUEST {
  set key "rate:[IP::client_addr]"
  set n [table incr $key]
  if { $n == 1 } { table lifetime $key 60 }
  if { $n > 2 } {
    HTTP::respond 429 content "Too many requests" Retry-After 60
    return
  }
  log local0. "request $n from [IP::client_addr]"
}`, events: []Event{HTTPRequest, HTTPRequest, HTTPRequest}, want: []string{"respond 429", "request 1 from", "request 2 from"}},

	{name: "static maintenance switch", rule: `when RULE_INIT {
  set static::maintenance 1
  set static::maint_uri "/maintenance"
}
when HTTP_REQUEST {
  if { $static::maintenance && !([HTTP::uri] starts_with $static::maint_uri) } {
    HTTP::redirect $static::maint_uri
  }
}`, events: []Event{RuleInit, HTTPRequest}, want: []string{"Location: /maintenance"}},

	{name: "secure cookies", resp: testResponse, rule: `when HTTP_RESPONSE {
  foreach c [HTTP::cookie names] {
    HTTP::cookie secure $c enable
    HTTP::cookie httponly $c enable
  }
  log local0. "cookies [HTTP::cookie names] secure=[HTTP::cookie secure sid]"
}`, events: []Event{HTTPResponse}, want: []string{"cookies sid pref secure=enable"}},

	{name: "rewrite location on redirects", resp: testResponse, rule: `when HTTP_RESPONSE {
  if { [HTTP::is_redirect] } {
    HTTP::header replace Location [string map {"http://" "https://"} [HTTP::header Location]]
    log local0. "location [HTTP::header Location]"
  }
}`, events: []Event{HTTPResponse}, want: []string{"location https://www.example.com/login"}},

	{name: "log to a remote syslog server", rule: `when HTTP_REQUEST {
  log 127.0.0.9:5514 local0.info "[IP::client_addr] [HTTP::method] [HTTP::uri]"
  log -noname local0. "plain line"
}`, events: []Event{HTTPRequest}, want: []string{"remote 127.0.0.9:5514 local0.info Rule /Common/r <HTTP_REQUEST>: 127.0.0.9 GET /app/v1/items.json?id=42&lang=en", "local0.info plain line"}},

	{name: "pool from query with catch", req: "GET /x?pool=beta_pool HTTP/1.1\r\nHost: www.example.com\r\n\r\n", rule: `when HTTP_REQUEST {
  set p [URI::decode [URI::query [HTTP::uri] pool]]
  if { [catch { pool $p } err] } {
    log local0.err "bad pool $p: $err"
    pool web_pool
  }
}`, events: []Event{HTTPRequest}, want: []string{"pool beta_pool"}},

	{name: "regexp version routing and lb logging", req: "GET /api/v2/orders HTTP/1.1\r\nHost: api.example.com\r\n\r\n", rule: `when HTTP_REQUEST priority 200 {
  if { [regexp {^/api/v([0-9]+)/} [HTTP::path] -> ver] } {
    switch -regexp -- $ver {
      {^[12]$} { pool test_pool }
      default { HTTP::respond 410 content "API version $ver retired" }
    }
  }
}
when LB_SELECTED {
  log local0. "v$ver to [LB::server pool] [LB::server addr]:[LB::server port] at [clock format [clock seconds] -format {%Y}]"
}`, events: []Event{HTTPRequest, LBSelected}, want: []string{"pool test_pool", "v2 to test_pool 127.0.0.34:9000 at 2"}},

	{name: "deprecated matchclass, both forms", req: "GET /static/site.css HTTP/1.1\r\nHost: www.example.com\r\n\r\n", rule: `when HTTP_REQUEST {
  if { [matchclass [IP::client_addr] equals allowed_ips] } {
    set at [matchclass [HTTP::path] starts_with path_pools]
    set in [matchclass path_pools contains "/sta"]
    set none [matchclass ::blocked_ips equals [IP::client_addr]]
    log local0. "allowed at=$at in=$in none=$none [class element -name [expr {$at - 1}] path_pools]"
    pool web_pool
  }
}`, events: []Event{HTTPRequest}, want: []string{"pool web_pool", "allowed at=2 in=2 none=0 /static/"}},

	{name: "deprecated findclass redirect table", req: "GET /app/ HTTP/1.1\r\nHost: www.example.com\r\n\r\n", rule: `when HTTP_REQUEST {
  set to [findclass [HTTP::path] ::path_pools " "]
  set whole [findclass "/stat" path_pools]
  set none [findclass "/nowhere" path_pools " "]
  log local0. "to=$to whole=$whole none=$none"
  if { $to ne "" } { pool $to }
}`, events: []Event{HTTPRequest}, want: []string{"pool app_pool", "to=app_pool whole=/static/ static_pool none="}},

	{name: "subnet persistence and proc", rule: `proc subnet24 { ip } {
  return [IP::addr $ip mask 255.255.255.0]
}
when HTTP_REQUEST {
  scan [IP::client_addr] {%d.%d.%d.%d} a b c d
  set net [call subnet24 [IP::client_addr]]
  persist uie "$net" 600
  log local0. "net $net last octet $d"
}`, events: []Event{HTTPRequest}, want: []string{`persist m2 "127.0.0.0" 10m0s`, "net 127.0.0.0 last octet 9"}},

	{name: "class search and names", rule: `when HTTP_REQUEST {
  set hostkeys [class names host_pools]
  set hit [class search -name host_pools ends_with ".example.com"]
  log local0. "keys [lsort $hostkeys] first $hit size [class size host_pools]"
  if { [class exists path_pools] && [lsearch -exact $hostkeys "www.example.com"] >= 0 } { pool web_pool }
}`, events: []Event{HTTPRequest}, want: []string{"pool web_pool", "keys api.example.com www.example.com first "}},

	{name: "insert and remove cookies", resp: "HTTP/1.1 200 OK\r\nSet-Cookie: tracking=1; Path=/\r\nContent-Length: 0\r\n\r\n", rule: `when HTTP_REQUEST {
  if { ![HTTP::cookie exists lb_debug] } { set first 1 } else { set first 0 }
}
when HTTP_RESPONSE {
  HTTP::cookie remove tracking
  if { $first } {
    HTTP::cookie insert name lb_debug value [IP::server_addr] path /
  }
  log local0. "set-cookie [HTTP::header values Set-Cookie]"
}`, events: []Event{HTTPRequest, HTTPResponse}, want: []string{"set-cookie {lb_debug=127.0.0.34; path=/}"}},

	{name: "json body inspection", req: "POST /api/login HTTP/1.1\r\nHost: api.example.com\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n", rule: `when HTTP_REQUEST {
  if { [HTTP::method] eq "POST" && [HTTP::header Content-Type] contains "json" } {
    set len [HTTP::header Content-Length]
    if { $len ne "" && $len <= 65536 } { HTTP::collect $len }
  }
}
when HTTP_REQUEST_DATA {
  if { [HTTP::payload] contains "\"admin\"" } {
    HTTP::respond 403 content "{\"error\":\"forbidden\"}" Content-Type application/json
  }
  HTTP::release
}`, events: []Event{HTTPRequest}, want: []string{"collect 27 response=false"}},

	{name: "info exists and arrays", rule: `when RULE_INIT {
  array set static::pool_for { api api_pool www web_pool }
}
when HTTP_REQUEST {
  set sub [lindex [split [HTTP::host] "."] 0]
  if { [info exists static::pool_for($sub)] } {
    pool $static::pool_for($sub)
  } elseif { ![info exists nothing] } {
    pool default_pool
  }
}`, events: []Event{RuleInit, HTTPRequest}, want: []string{"pool web_pool"}},

	{name: "query rewrite and basename", req: "GET /img/photo.JPG?size=large&utm_source=x HTTP/1.1\r\nHost: www.example.com\r\n\r\n", rule: `when HTTP_REQUEST {
  set file [string tolower [URI::basename [HTTP::uri]]]
  set q [HTTP::query]
  if { $q contains "utm_" } {
    HTTP::uri "[HTTP::path]?size=[URI::query [HTTP::uri] size]"
  }
  log local0. "file $file query $q now [HTTP::uri]"
}`, events: []Event{HTTPRequest}, want: []string{"file photo.jpg query size=large&utm_source=x now /img/photo.JPG?size=large"}},

	{name: "cache headers with clock format", resp: "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 0\r\n\r\n", rule: `when HTTP_RESPONSE {
  if { [HTTP::header Content-Type] starts_with "image/" } {
    HTTP::header replace Cache-Control "public, max-age=3600"
    HTTP::header replace Expires [clock format [expr {[clock seconds] + 3600}] -format "%a, %d %b %Y %H:%M:%S GMT" -gmt 1]
    log local0. "expires [regexp {^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9:]{8} GMT$} [HTTP::header Expires]]"
  }
}`, events: []Event{HTTPResponse}, want: []string{"expires 1"}},

	{name: "bot filter and request id", req: "GET /search?q=x HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: FooBot/1.0\r\n\r\n", rule: `when HTTP_REQUEST {
  if { [string match -nocase "*bot*" [HTTP::header User-Agent]] && [HTTP::path] eq "/search" } {
    HTTP::respond 429 content "slow down" Retry-After 120
    return
  }
  HTTP::header insert X-Request-ID [format "%08x" [expr {int(rand() * 4294967295)}]]
}`, events: []Event{HTTPRequest}, want: []string{"respond 429", "Retry-After: 120"}},

	{name: "regsub path rewrite", req: "GET /Old/Path/old/x?y=1 HTTP/1.1\r\nHost: www.example.com\r\n\r\n", rule: `when HTTP_REQUEST {
  if { [regsub -all -nocase {/old/} [HTTP::path] "/new/" newpath] > 0 } {
    set q [string range [HTTP::uri] [string first "?" [HTTP::uri]] end]
    HTTP::uri "$newpath$q"
    log local0. "rewrote to [HTTP::uri]"
  }
}`, events: []Event{HTTPRequest}, want: []string{"rewrote to /new/Path/new/x?y=1"}},

	{name: "lb reselect on failure", rule: `when LB_FAILED {
  if { [active_members test_pool] > 0 } {
    LB::reselect pool test_pool
    log local0. "reselect after [LB::server addr] failed, tries [incr ::tries]"
  }
}`, events: []Event{LBFailed}, want: []string{"LB::reselect test_pool", "tries 1"}},

	{name: "subtable counting users", rule: `when HTTP_REQUEST {
  set sid [HTTP::cookie value JSESSIONID]
  table set -subtable "users:vs_www" $sid 1 1800
  set n [table keys -subtable "users:vs_www" -count]
  if { $n > 1000 } { HTTP::respond 503 content "too many users" }
  log local0. "users $n"
}`, events: []Event{HTTPRequest}, want: []string{"users 1"}},

	// HTTP::header value is the last field of that name, as on BIG-IP.
	{name: "cookie shorthand and header value", rule: `when HTTP_REQUEST {
  set sess [HTTP::cookie "JSESSIONID"]
  set xff [HTTP::header value "X-Forwarded-For"]
  set parts [lsort -unique [split [join [HTTP::header values X-Forwarded-For] ","] ", "]]
  log local0. "sess=$sess xff=$xff all=[join [lsearch -all -inline -not $parts {}] ,]"
}`, events: []Event{HTTPRequest}, want: []string{"sess=abc123 xff=10.9.9.9 all=10.1.2.3,10.9.9.9"}},

	{name: "hex token with binary format", rule: `when HTTP_REQUEST {
  binary scan [md5 [HTTP::uri]] H* hex
  set tok [b64encode [binary format H* $hex]]
  if { [string length $hex] == 32 && $tok eq [b64encode [md5 [HTTP::uri]]] } { log local0. "token ok [string range $hex 0 7]" }
}`, events: []Event{HTTPRequest}, want: []string{"token ok "}},

	// (The filter's work on the body is the dataplane's; here, the
	// state the rule leaves it in.)
	{name: "stream rewrite of text responses", rule: `when HTTP_REQUEST {
  STREAM::disable
  HTTP::header remove Accept-Encoding
}
when HTTP_RESPONSE {
  if { [HTTP::header Content-Type] starts_with "text/" } {
    STREAM::expression {@http://@https://@}
    STREAM::enable
  }
}`, resp: "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 0\r\n\r\n", events: []Event{HTTPRequest, HTTPResponse},
		stream: true, want: []string{"stream on=true expr=@http://@https://@"}},

	{name: "log publisher", rule: `when CLIENT_ACCEPTED {
  set hsl [HSL::open -publisher /Common/remote_pub]
  HSL::send $hsl "client [IP::client_addr]"
}`, events: []Event{ClientAccepted}, want: []string{"hsl:pub:/Common/remote_pub client "}},
}

// TestPublishedRules compiles and runs iRules in the style published for
// real BIG-IPs, and reports how many openltm runs.
func TestPublishedRules(t *testing.T) {
	ran, kept := 0, 0
	for _, c := range publishedRules {
		t.Run(c.name, func(t *testing.T) {
			r, err := Compile("/Common/r", c.rule)
			if c.unsupported != "" {
				var ue *UnsupportedError
				if !errors.As(err, &ue) || r == nil {
					t.Fatalf("compile: %v; want it kept as not implemented (%s)", err, c.unsupported)
				}
				if !strings.Contains(err.Error(), c.unsupported) {
					t.Fatalf("compile: %v; want it to name %s", err, c.unsupported)
				}
				kept++
				return
			}
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			logs := &logSink{}
			hsl := &hslFake{}
			p := NewProgram(publishedEnv(t, logs, hsl), r)
			if err := p.Init(); err != nil {
				t.Fatalf("RULE_INIT: %v", err)
			}
			req := c.req
			if req == "" {
				req = testRequest
			}
			f := newHTTPFake(t, req, c.resp)
			f.members["web_pool"] = nil // every member down
			s := p.NewConnState(f)
			defer s.Release()
			if c.stream {
				s.SetStream("")
			}
			for _, ev := range c.events {
				if ev == RuleInit {
					continue
				}
				if err := s.Run(ev); err != nil {
					t.Fatalf("%s: %v", ev, err)
				}
			}
			record := f.String() + "\n" + strings.Join(logs.lines, "\n") + "\n" + strings.Join(hsl.sent, "\n")
			if st := s.Stream(); st != nil {
				record += fmt.Sprintf("\nstream on=%v expr=%s", st.On, st.Expr)
			}
			at := 0
			for _, w := range c.want {
				i := strings.Index(record[at:], w)
				if i < 0 && strings.Contains(w, `\`) {
					i = strings.Index(fmt.Sprintf("%q", record[at:]), w)
					if i >= 0 {
						continue
					}
				}
				if i < 0 {
					t.Fatalf("want %q after position %d in:\n%s", w, at, record)
				}
				at += i + len(w)
			}
			ran++
		})
	}
	t.Logf("published-style rules: %d of %d compile and run; %d kept as using F5 commands openltm lacks", ran, len(publishedRules), kept)
}
