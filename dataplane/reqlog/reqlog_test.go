package reqlog

import (
	"net/netip"
	"reflect"
	"testing"
	"time"
)

func TestTemplate(t *testing.T) {
	now := time.Date(2026, 12, 4, 9, 5, 7, 123456789, time.FixedZone("CET", 3600))
	r := &Record{
		Client:      netip.MustParseAddrPort("192.0.2.10:51000"),
		Virtual:     netip.MustParseAddrPort("198.51.100.1:80"),
		Server:      netip.MustParseAddrPort("10.0.0.11:8080"),
		SNAT:        netip.MustParseAddrPort("10.0.0.1:40000"),
		VirtualName: "/Common/web_vs", PoolName: "/Common/web_pool", Hostname: "lb1.example",
		Request:      []byte("GET /a/b?x=1&y=2 HTTP/1.1\r\nHost: www.example\r\nUser-Agent: curl/8\r\nReferer: http://r.example/\r\n\r\n"),
		Response:     []byte("HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nServer: m1\r\n\r\n"),
		KeepAlive:    true,
		ResponseSize: 321,
		Start:        now.Add(-1500 * time.Microsecond),
		Now:          now,
	}
	for _, c := range []struct{ tmpl, want string }{
		{"$CLIENT_IP:$CLIENT_PORT -> $VIRTUAL_IP:$VIRTUAL_PORT ($VIRTUAL_NAME, $VIRTUAL_POOL_NAME) -> $SERVER_IP:$SERVER_PORT via $SNAT_IP:$SNAT_PORT on $BIGIP_HOSTNAME",
			"192.0.2.10:51000 -> 198.51.100.1:80 (/Common/web_vs, /Common/web_pool) -> 10.0.0.11:8080 via 10.0.0.1:40000 on lb1.example"},
		{`"$HTTP_REQUEST" $HTTP_METHOD $HTTP_URI $HTTP_PATH $HTTP_QUERY $HTTP_VERSION $HTTP_KEEPALIVE`,
			`"GET /a/b?x=1&y=2 HTTP/1.1" GET /a/b?x=1&y=2 /a/b x=1&y=2 1.1 1`},
		{"$HTTP_STATCODE [$HTTP_STATUS] $RESPONSE_SIZE $RESPONSE_MSECS $RESPONSE_USECS", "404 [404 Not Found] 321 1 1500"},
		{"$Host ${User-agent} $Referer ${Content-Type} $Server [$Missing]", "www.example curl/8 http://r.example/ text/html m1 []"},
		{"$DATE_NCSA $DATE_HTTP", "[04/Dec/2026:09:05:07 +0100] Fri, 04 Dec 2026 08:05:07 GMT"},
		{"$DATE_YYYY-$DATE_MM-${DATE_DD}T${TIME_HMS}.$TIME_MSECS$TIME_OFFSET", "2026-12-04T09:05:07.123+0100"},
		{"$DATE_D|$DATE_DAY|$DATE_DY|$DATE_MON|$DATE_MONTH|$DATE_YY", " 4|Friday|Fri|Dec|December|26"},
		{"$TIME_AMPM $TIME_H12 $TIME_HH12 $TIME_HRS $TIME_HH24 $TIME_MM $TIME_SS $TIME_USECS $TIME_ZONE $TIME_UNIX", "AM 9 09 9 09 05 07 123456 CET 1796371507"},
		{"a$NULL.b $ $$ ${unclosed", "a.b $ $$ ${unclosed"},
		{"100% $", "100% $"},
	} {
		if got := string(Parse(c.tmpl).Append(nil, r)); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.tmpl, got, c.want)
		}
	}
	// A request line has no response: its status is empty, a header is
	// the request's.
	req := *r
	req.Response = nil
	if got := string(Parse("[$HTTP_STATCODE] $Host ${Content-Type}").Append(nil, &req)); got != "[] www.example " {
		t.Errorf("request line: %q", got)
	}
}

func TestUnknownNames(t *testing.T) {
	tm := Parse("$CLIENT_IP $WAM_APPLICATION_NAME ${SSL_CIPHER} $Host $X_Custom")
	if want := []string{"WAM_APPLICATION_NAME", "SSL_CIPHER"}; !reflect.DeepEqual(tm.Unknown, want) {
		t.Errorf("unknown %q, want %q", tm.Unknown, want)
	}
}
