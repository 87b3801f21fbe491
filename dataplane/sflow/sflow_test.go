package sflow

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/sflow/sflowdec"
)

var testReq = []byte("GET /a/b?c=1 HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: curl/8.0\r\nReferer: http://x/\r\nX-Forwarded-For: 10.0.0.1\r\n\r\n")
var testResp = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\n")

func testSample() *HTTPSample {
	return &HTTPSample{Request: testReq, Response: testResp, Status: 200, ReqBytes: 0, RespBytes: 5,
		Duration: 1500 * time.Microsecond,
		Local:    netip.MustParseAddrPort("127.173.0.10:80"), Remote: netip.MustParseAddrPort("127.173.0.1:40000")}
}

// datagram wraps samples in a datagram's header as the agent does.
func datagram(agent netip.Addr, n uint32, samples []byte) []byte {
	b := appendU32(nil, 5)
	b = appendAddress(b, agent)
	b = appendU32(b, 7)
	b = appendU32(b, 3)
	b = appendU32(b, 1234)
	b = appendU32(b, n)
	return append(b, samples...)
}

func TestFlowSampleRoundTrip(t *testing.T) {
	long := strings.Repeat("u", 300)
	cases := []struct {
		name string
		mod  func(s *HTTPSample)
		want map[string]string
		sock map[string]string
	}{
		{"get", func(*HTTPSample) {}, map[string]string{"method": "GET", "protocol": "1.1", "uri": "/a/b?c=1", "host": "www.example.com",
			"referer": "http://x/", "useragent": "curl/8.0", "xff": "10.0.0.1", "mime_type": "text/html", "resp_bytes": "5", "uS": "1500", "status": "200"},
			map[string]string{"protocol": "6", "local_ip": "127.173.0.10", "remote_ip": "127.173.0.1", "local_port": "80", "remote_port": "40000"}},
		{"post without fields", func(s *HTTPSample) {
			s.Request = []byte("POST /p HTTP/1.0\r\n\r\n")
			s.Response, s.Status, s.ReqBytes = nil, 404, 12
		}, map[string]string{"method": "POST", "protocol": "1.0", "uri": "/p", "host": "", "useragent": "", "mime_type": "", "req_bytes": "12", "status": "404"}, nil},
		{"other method, long uri cut", func(s *HTTPSample) {
			s.Request = []byte("PROPFIND /" + long + " HTTP/1.1\r\nhost: h\r\n\r\n")
		}, map[string]string{"method": "OTHER", "uri": "/" + long[:254], "host": "h"}, nil},
		{"ipv6", func(s *HTTPSample) {
			s.Local = netip.MustParseAddrPort("[::1]:443")
			s.Remote = netip.MustParseAddrPort("[::1]:5000")
		}, nil, map[string]string{"local_ip": "::1", "local_port": "443", "remote_port": "5000"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := testSample()
			c.mod(s)
			b := appendFlowSample(nil, 9, SourceID(ClassLogical, 42), 16, 48, s)
			d, err := sflowdec.Decode(datagram(netip.MustParseAddr("127.173.0.5"), 1, b))
			if err != nil {
				t.Fatal(err)
			}
			if d.Agent.String() != "127.173.0.5" || d.SubAgent != 7 || d.Sequence != 3 || d.Uptime != 1234 || len(d.Samples) != 1 {
				t.Fatalf("header: %+v", d)
			}
			smp := d.Samples[0]
			if !smp.Flow || smp.Sequence != 9 || smp.Class != ClassLogical || smp.Index != 42 || smp.Rate != 16 || smp.Pool != 48 || len(smp.Records) != 2 {
				t.Fatalf("sample: %v", smp)
			}
			for k, v := range c.want {
				if got := smp.Records[0].Get(k); got != v {
					t.Errorf("%s = %q, want %q (%v)", k, got, v, smp)
				}
			}
			for k, v := range c.sock {
				if got := smp.Records[1].Get(k); got != v {
					t.Errorf("socket %s = %q, want %q (%v)", k, got, v, smp)
				}
			}
		})
	}
}

func TestCounterRecordsRoundTrip(t *testing.T) {
	var b []byte
	b = appendU32(b, formatCounterSample)
	at := len(b)
	b = appendU32(b, 0)
	b = appendU32(b, 4)
	b = appendU32(b, SourceID(ClassPhysical, 1))
	b = appendU32(b, 6)
	b = AppendHTTPCounters(b, HTTPCounters{Get: 3, Post: 2, OtherMethod: 1, Status2xx: 4, Status5xx: 2})
	b = AppendIfCounters(b, IfCounters{Index: 1, Type: 24, InOctets: 1 << 40, OutUcast: 9, Status: 3})
	b = AppendHost(b, Host{Hostname: "openltm.local", Load1: 0.5, CPUs: 2, MemTotal: 1 << 33, SwapFree: 7})
	b = AppendVLANCounters(b, VLANCounters{ID: 100, Octets: 1 << 35, Ucast: 6, Discards: 2})
	patchLen(b, at)
	d, err := sflowdec.Decode(datagram(netip.MustParseAddr("::1"), 1, b))
	if err != nil {
		t.Fatal(err)
	}
	s := d.Samples[0]
	if s.Flow || s.Sequence != 4 || s.Class != ClassPhysical || s.Index != 1 || len(s.Records) != 6 {
		t.Fatalf("sample: %v", s)
	}
	checks := []struct {
		rec         int
		field, want string
	}{
		{0, "method_get_count", "3"}, {0, "method_post_count", "2"}, {0, "method_other_count", "1"},
		{0, "status_2XX_count", "4"}, {0, "status_5XX_count", "2"}, {0, "status_other_count", "0"},
		{1, "ifIndex", "1"}, {1, "ifType", "24"}, {1, "ifInOctets", "1099511627776"}, {1, "ifOutUcastPkts", "9"}, {1, "ifStatus", "3"},
		{2, "hostname", "openltm.local"}, {2, "os_name", "2"},
		{3, "load_one", "0.5"}, {3, "cpu_num", "2"},
		{4, "mem_total", "8589934592"}, {4, "swap_free", "7"},
		{5, "vlan_id", "100"}, {5, "octets", "34359738368"}, {5, "ucastPkts", "6"}, {5, "multicastPkts", "0"}, {5, "discards", "2"},
	}
	for _, c := range checks {
		if got := s.Records[c.rec].Get(c.field); got != c.want {
			t.Errorf("record %d %s = %q, want %q", c.rec, c.field, got, c.want)
		}
	}
}

func TestSamplerRate(t *testing.T) {
	for _, rate := range []uint32{1, 2, 10, 100} {
		s := NewSampler(SourceID(ClassLogical, 1))
		if s.Pick() {
			t.Fatal("a sampler without an agent picked")
		}
		s.Set(&Agent{}, rate)
		const n = 20000
		picked := 0
		for range n {
			if s.Pick() {
				picked++
			}
		}
		want := n / int(rate)
		if picked < want*8/10 || picked > want*12/10+1 {
			t.Errorf("rate %d: picked %d of %d, want about %d", rate, picked, n, want)
		}
		if rate == 1 && picked != n {
			t.Errorf("rate 1 picked %d of %d", picked, n)
		}
		if p := s.pool.Load(); p > n || p < n-2*rate {
			t.Errorf("rate %d: pool %d after %d requests", rate, p, n)
		}
		s.Set(nil, rate)
		if s.Pick() {
			t.Errorf("rate %d: picked without an agent", rate)
		}
		// An agent again, at the same rate: picking starts again.
		s.Set(&Agent{}, rate)
		picked = 0
		for range 4 * rate {
			if s.Pick() {
				picked++
			}
		}
		if picked == 0 {
			t.Errorf("rate %d: nothing picked in %d requests once the agent was back", rate, 4*rate)
		}
	}
}

// listen is a UDP collector on loopback.
func listen(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.173.0.2")})
	if err != nil {
		t.Skipf("no loopback address 127.173.0.2: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func read(t *testing.T, c *net.UDPConn) *sflowdec.Datagram {
	t.Helper()
	buf := make([]byte, 65536)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	d, err := sflowdec.Decode(buf[:n])
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestAgentSendsAndSplits(t *testing.T) {
	c := listen(t)
	a, err := NewAgent([]Receiver{{Name: "/Common/r", Addr: c.LocalAddr().(*net.UDPAddr).AddrPort(), MaxDatagram: 600}}, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s := NewSampler(SourceID(ClassLogical, 5))
	s.Set(a, 1)
	for range 4 {
		if !s.Pick() {
			t.Fatal("rate 1 did not pick")
		}
		s.Sample(testSample())
	}
	got, datagrams := 0, 0
	for got < 4 {
		d := read(t, c)
		datagrams++
		if d.Agent.String() != "127.0.0.1" && !strings.HasPrefix(d.Agent.String(), "127.") {
			t.Errorf("agent address %s", d.Agent)
		}
		for _, smp := range d.Samples {
			got++
			if smp.Sequence != uint32(got) || smp.Records[0].Get("uri") != "/a/b?c=1" {
				t.Errorf("sample %d: %v", got, smp)
			}
		}
	}
	if st := a.Stats(); st.FlowSamples.Load() != 4 || datagrams < 2 {
		t.Errorf("flow samples %d in %d datagrams: each of 600 bytes holds fewer than four", st.FlowSamples.Load(), datagrams)
	}
}

func TestAgentPollsCounters(t *testing.T) {
	c := listen(t)
	a, err := NewAgent([]Receiver{{Addr: c.LocalAddr().(*net.UDPAddr).AddrPort(), MaxDatagram: 1400}}, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	calls := 0
	a.SetSources([]*CounterSource{{ID: SourceID(ClassLogical, 8), Interval: time.Second, Append: func(b []byte) ([]byte, int) {
		calls++
		return AppendHTTPCounters(b, HTTPCounters{Get: uint32(calls)}), 1
	}}})
	d := read(t, c)
	if len(d.Samples) != 1 || d.Samples[0].Flow || d.Samples[0].Index != 8 || d.Samples[0].Records[0].Get("method_get_count") != "1" {
		t.Fatalf("counter sample: %+v", d.Samples)
	}
}

func TestFlowSampleAllocations(t *testing.T) {
	buf := make([]byte, 0, 4096)
	s := testSample()
	if n := testing.AllocsPerRun(100, func() {
		buf = appendFlowSample(buf[:0], 1, 2, 3, 4, s)
	}); n != 0 {
		t.Errorf("encoding a flow sample allocates %v times", n)
	}
	a := &Agent{max: 65507, buf: make([]byte, 28, 70000), spare: make([]byte, 0, 4096), stats: &Stats{}, addr: netip.MustParseAddr("127.0.0.1")}
	sm := NewSampler(1)
	sm.Set(a, 1)
	if n := testing.AllocsPerRun(100, func() {
		if sm.Pick() {
			sm.Sample(s)
		}
		if len(a.buf) > 60000 {
			a.buf, a.n = a.buf[:28], 0
		}
	}); n != 0 {
		t.Errorf("a picked request allocates %v times", n)
	}
}

func BenchmarkSample(b *testing.B) {
	a := &Agent{max: 65507, buf: make([]byte, 28, 70000), spare: make([]byte, 0, 4096), stats: &Stats{}, addr: netip.MustParseAddr("127.0.0.1")}
	sm := NewSampler(1)
	sm.Set(a, 1)
	s := testSample()
	b.ReportAllocs()
	for b.Loop() {
		if sm.Pick() {
			sm.Sample(s)
		}
		if len(a.buf) > 60000 {
			a.buf, a.n = a.buf[:28], 0
		}
	}
}
