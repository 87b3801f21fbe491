package daemon

import (
	"io"
	"net"
	"net/http"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/sflow/sflowdec"
)

// sflowCollector gathers the samples of the datagrams it receives.
type sflowCollector struct {
	mu      sync.Mutex
	samples []sflowdec.Sample
	errs    []error
}

func (c *sflowCollector) flows() (fs, cs []sflowdec.Sample) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.samples {
		if s.Flow {
			fs = append(fs, s)
		} else {
			cs = append(cs, s)
		}
	}
	return fs, cs
}

func startSFlowCollector(t *testing.T, addr string) *sflowCollector {
	t.Helper()
	ua, _ := net.ResolveUDPAddr("udp", addr)
	conn, err := net.ListenUDP("udp", ua)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &sflowCollector{}
	go func() {
		buf := make([]byte, 65536)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			d, err := sflowdec.Decode(buf[:n])
			c.mu.Lock()
			if err != nil {
				c.errs = append(c.errs, err)
			} else {
				c.samples = append(c.samples, d.Samples...)
			}
			c.mu.Unlock()
		}
	}()
	return c
}

// TestSFlowHTTPVirtual: curl through an http virtual whose http profile
// samples every request (sampling-rate 1): each request reaches the
// receiver as a flow sample with its method, URI, host, user agent,
// status and the client's socket, and the virtual's http counters come
// every second; sampling-rate 0 stops the flow samples; a net vlan's
// counters come at the vlan poll-interval; a disabled receiver stops
// everything.
func TestSFlowHTTPVirtual(t *testing.T) {
	t.Parallel()
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is needed for this test")
	}
	_, s := publisherEngine(t)
	col := startSFlowCollector(t, "127.173.2.50:6343")
	ln, err := net.Listen("tcp", "127.173.2.21:8080")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if r.URL.Path == "/missing" {
			w.WriteHeader(404)
		}
		io.WriteString(w, "page")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	mustRun(t, s,
		"create ltm pool sf_web members add { 127.173.2.21:8080 }",
		"create ltm profile http sf_http defaults-from http sflow { sampling-rate 1 sampling-rate-global no poll-interval 1 poll-interval-global no }",
		"create ltm virtual sf_vs destination 127.173.2.20:80 pool sf_web profiles replace-all-with { tcp sf_http }",
		"create ltm virtual plain_vs destination 127.173.2.22:80 pool sf_web profiles replace-all-with { tcp http }",
		"modify sys sflow global-settings http sampling-rate 0 poll-interval 0",
		"modify sys sflow global-settings system poll-interval 0",
		"modify sys sflow global-settings interface poll-interval 0",
		"create sys sflow receiver sf_r address 127.173.2.50 port 6343 state enabled",
	)
	get := func(url string) {
		t.Helper()
		out, err := exec.Command(curl, "-sS", "--interface", "127.173.2.1", "-A", "sflow-test", "-e", "http://from/", url).CombinedOutput()
		if err != nil || string(out) != "page" {
			t.Fatalf("curl %s: %v %q", url, err, out)
		}
	}
	get("http://127.173.2.20/a?x=1")
	get("http://127.173.2.20/missing")
	get("http://127.173.2.22/plain") // sampling-rate 0 (global): not sampled
	eventually(t, 10*time.Second, "two flow samples and an http counter sample", func() bool {
		fs, cs := col.flows()
		return len(fs) >= 2 && len(cs) >= 1
	})
	fs, cs := col.flows()
	if len(fs) != 2 || len(col.errs) > 0 {
		t.Fatalf("flow samples %v, errors %v", fs, col.errs)
	}
	want := []map[string]string{
		{"method": "GET", "protocol": "1.1", "uri": "/a?x=1", "host": "127.173.2.20", "useragent": "sflow-test", "referer": "http://from/", "status": "200", "resp_bytes": "4", "mime_type": "text/plain"},
		{"uri": "/missing", "status": "404"},
	}
	for i, w := range want {
		f := fs[i]
		if f.Class != 3 || f.Index != sflowIndex("/Common/sf_vs") || f.Rate != 1 || f.Sequence != uint32(i+1) || f.Pool != uint32(i+1) || len(f.Records) != 2 {
			t.Fatalf("flow sample %d: %v", i, f)
		}
		for k, v := range w {
			if got := f.Records[0].Get(k); got != v {
				t.Errorf("sample %d: %s = %q, want %q", i, k, got, v)
			}
		}
		sock := f.Records[1]
		if sock.Get("local_ip") != "127.173.2.20" || sock.Get("local_port") != "80" || sock.Get("remote_ip") != "127.173.2.1" {
			t.Errorf("sample %d socket: %v", i, sock)
		}
	}
	c := cs[len(cs)-1]
	if c.Index != sflowIndex("/Common/sf_vs") || c.Records[0].Get("method_get_count") != "2" || c.Records[0].Get("status_4XX_count") != "1" {
		t.Errorf("http counters: %v", c)
	}

	// Sampling off on the profile: the requests go on, no flow sample.
	mustRun(t, s, "modify ltm profile http sf_http sflow { sampling-rate 0 }")
	get("http://127.173.2.20/b")
	time.Sleep(1500 * time.Millisecond)
	if fs, _ := col.flows(); len(fs) != 2 {
		t.Fatalf("%d flow samples with sampling-rate 0", len(fs))
	}
	// Back on: the source's sequence goes on where it was.
	mustRun(t, s, "modify ltm profile http sf_http sflow { sampling-rate 1 }")
	get("http://127.173.2.20/c")
	eventually(t, 10*time.Second, "a third flow sample", func() bool {
		fs, _ := col.flows()
		return len(fs) >= 3
	})
	if fs, _ := col.flows(); fs[2].Sequence != 3 || fs[2].Records[0].Get("uri") != "/c" {
		t.Errorf("third sample %v", fs[2])
	}

	// A net vlan's counters (its interfaces' traffic) every second.
	mustRun(t, s, "create net vlan sf_vlan interfaces { lo { } } tag 100", "modify sys sflow global-settings vlan poll-interval 1")
	eventually(t, 10*time.Second, "a vlan counter sample", func() bool {
		_, cs := col.flows()
		for _, c := range cs {
			if c.Class == 1 && c.Index == 100 && c.Records[0].Get("vlan_id") == "100" && c.Records[0].Get("octets") != "0" {
				return true
			}
		}
		return false
	})

	// A disabled receiver gets nothing more.
	mustRun(t, s, "modify sys sflow receiver sf_r state disabled")
	time.Sleep(200 * time.Millisecond)
	col.mu.Lock()
	n := len(col.samples)
	col.mu.Unlock()
	get("http://127.173.2.20/d")
	time.Sleep(1500 * time.Millisecond)
	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.samples) != n {
		t.Errorf("%d samples after the receiver was disabled", len(col.samples)-n)
	}
}
