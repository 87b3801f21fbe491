package render

import (
	"bytes"
	"io"
	"testing"

	"github.com/openltm/openltm/dataplane"
)

func TestProfileStatBlocks(t *testing.T) {
	ssl := dataplane.ProfileStats{SSL: dataplane.SSLProfileStats{Cur: 7, Max: 31, Tot: 1234, Full: 1200, Resumed: 34, Failures: 5, Timeouts: 1, Alerts: 2, Premature: 3,
		TLS12: 1000, TLS13: 234, Ciphers: []dataplane.CipherCount{
			{Name: "TLS_AES_128_GCM_SHA256", N: 234}, {Name: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", N: 900}, {Name: "B", N: 50},
			{Name: "C", N: 40}, {Name: "D", N: 30}, {Name: "E (past the five most used)", N: 20}}}}
	for _, tc := range []struct {
		name string
		draw func(io.Writer, string, dataplane.ProfileStats, Options) error
		st   dataplane.ProfileStats
		o    Options
		want string
	}{
		{"http, scaled", HTTPProfile, dataplane.ProfileStats{HTTP: dataplane.HTTPProfileStats{Requests: 37300, Get: 37000, Post: 300,
			V11: 37300, MaxPerConn: 4, KeepAlive: 12, Resp2xx: 37000, Resp5xx: 300, Pipelined: 2100, CookieInserts: 9}}, Options{Folder: "/Common"}, `-------------------------------
Ltm::HTTP Profile: http_custom
-------------------------------
Virtual Server Name   N/A
Cookies
Cookie Persistence Inserts    9
Requests
Total                     37.3K
GET                       37.0K
POST                        300
HEAD                          0
Other Methods                 0
Version 1.0 Requests          0
Version 1.1 Requests      37.3K
Pipelined Requests         2.1K
Max Requests per Connection   4
Connection: keep-alive       12
Connection: close             0
Responses
1xx                           0
2xx                       37.0K
3xx                           0
4xx                           0
5xx                         300
Other                         0

`},
		{"http-compression, raw", CompressProfile, dataplane.ProfileStats{Compress: dataplane.CompressProfileStats{Gzip: 12, Deflate: 3, Bypassed: 4, Pre: 245760, Post: 12288}}, Options{Raw: true}, `--------------------------------------------------
Ltm::HTTP Compression Profile: /Common/http_custom
--------------------------------------------------
Virtual Server Name   N/A
Responses
Compressed gzip       12
Compressed deflate     3
Bypassed               4
Bytes
Pre-Compression   245760
Post-Compression   12288

`},
		{"tcp, raw", TCPProfile, dataplane.ProfileStats{Conns: dataplane.ConnProfileStats{Cur: 3, Max: 9, Tot: 37300}}, Options{Raw: true}, `-------------------------------------
Ltm::TCP Profile: /Common/http_custom
-------------------------------------
Virtual Server Name   N/A
Connections
Current Open          3
Maximum Open          9
Accepts           37300
Closed            37297

`},
		{"udp, a reset with flows open", UDPProfile, dataplane.ProfileStats{Conns: dataplane.ConnProfileStats{Cur: 2, Max: 2, DatagramsIn: 7}}, Options{Folder: "/Common"}, `-----------------------------
Ltm::UDP Profile: http_custom
-----------------------------
Virtual Server Name   N/A
Flows
Current Open          2
Maximum Open          2
Accepts               0
Closed                0
Datagrams
Received              7
Transmitted           0
Dropped               0

`},
		{"client-ssl, five ciphers", ClientSSLProfile, ssl, Options{Folder: "/Common"}, `-------------------------------------------
Ltm::ClientSSL Profile: http_custom
-------------------------------------------
Virtual Server Name   N/A
SSL Protocol
TLS Protocol Version 1.0                  0
TLS Protocol Version 1.1                  0
TLS Protocol Version 1.2               1.0K
TLS Protocol Version 1.3                234
Common
Current Connections                       7
Maximum Connections                      31
Total Connections                      1.2K
Total Native Connections               1.2K
Full Handshakes                        1.2K
Resumed Handshakes                       34
Handshake Failures                        5
Handshake Timeouts                        1
Fatal Alerts Received                     2
Premature Disconnects                     3
Alert Timeouts                            0
Cipher Usage
TLS_AES_128_GCM_SHA256                  234
TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256   900
B                                        50
C                                        40
D                                        30

`},
		{"server-ssl, nothing yet", ServerSSLProfile, dataplane.ProfileStats{}, Options{Folder: "/Common"}, `-----------------------------------
Ltm::ServerSSL Profile: http_custom
-----------------------------------
Virtual Server Name   N/A
SSL Protocol
TLS Protocol Version 1.0   0
TLS Protocol Version 1.1   0
TLS Protocol Version 1.2   0
TLS Protocol Version 1.3   0
Common
Current Connections        0
Maximum Connections        0
Total Connections          0
Total Native Connections   0
Full Handshakes            0
Resumed Handshakes         0
Handshake Failures         0
Handshake Timeouts         0
Fatal Alerts Received      0
Premature Disconnects      0
Alert Timeouts             0
Cipher Usage

`},
		{"request-adapt, raw", RequestAdaptProfile, dataplane.ProfileStats{Adapt: dataplane.AdaptProfileStats{Unmodified: 12, Modified: 3, Answered: 2, Failed: 1}}, Options{Raw: true}, `-----------------------------------------------
Ltm::Request Adapt Profile: /Common/http_custom
-----------------------------------------------
Virtual Server Name   N/A
ICAP Exchanges
Total                18
Unmodified           12
Modified              3
Answered              2
Service Down          1

`},
		{"response-adapt, no answers", ResponseAdaptProfile, dataplane.ProfileStats{Adapt: dataplane.AdaptProfileStats{Unmodified: 4000, Modified: 1}}, Options{Folder: "/Common"}, `----------------------------------------
Ltm::Response Adapt Profile: http_custom
----------------------------------------
Virtual Server Name   N/A
ICAP Exchanges
Total              4.0K
Unmodified         4.0K
Modified              1
Service Down          0

`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.draw(&b, "/Common/http_custom", tc.st, tc.o); err != nil {
				t.Fatal(err)
			}
			diff(t, b.String(), tc.want)
		})
	}
}
