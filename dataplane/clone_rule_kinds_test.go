package dataplane

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/diameter"
	"github.com/openltm/openltm/dataplane/fix"
	"github.com/openltm/openltm/dataplane/h2gw"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/mqtt"
	"github.com/openltm/openltm/dataplane/mqtt/mqtttest"
)

// TestRuleCloneHTTP: on an http virtual a rule's clone in CLIENT_ACCEPTED
// copies the client's requests, on one clone connection per client that
// ends with it: clientside as the client sent them, in `serverside { }`
// as the member got them (with the X-Forwarded-For the profile
// inserts); a client the rule does not clone gets no copy.
func TestRuleCloneHTTP(t *testing.T) {
	for i, tc := range []struct {
		name, rule string
		cloned     bool
	}{
		{"cloned", "when CLIENT_ACCEPTED { clone pool /Common/ids_cs\n serverside { clone pool /Common/ids_ss } }", true},
		{"member", "when CLIENT_ACCEPTED { clone pool /Common/ids_cs member BASE3 9001\n serverside { clone pool /Common/ids_ss member BASE4 9001 } }", true},
		{"not cloned", "when CLIENT_ACCEPTED { if { [TCP::local_port] == 1 } { clone pool /Common/ids_cs } }", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := "127.189.1" + string(rune('1'+i)) + "."
			vs, member := base+"1:8080", base+"2:9000"
			startL7Member(t, member, "M1")
			cs := startCloneCollector(t, base+"3:9001")
			ss := startCloneCollector(t, base+"4:9001")
			p, _ := newPlane(t)
			cfg := l7Config(t, vs, false, mblb.HTTPOptions{InsertXFF: true}, strings.ReplaceAll(tc.rule, "BASE", base), member)
			addClonePool(cfg, "/Common/ids_cs", base+"3:9001")
			addClonePool(cfg, "/Common/ids_ss", base+"4:9001")
			mustApply(t, p, cfg)

			c := dialHTTPVS(t, vs)
			reqs := []string{
				"GET /one HTTP/1.1\r\nHost: a\r\n\r\n",
				"POST /two HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
			}
			for _, r := range reqs {
				resp, body, err := c.do(r)
				if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(body, "M1 ") {
					t.Fatalf("request through the virtual: %v %q", err, body)
				}
			}
			c.c.Close() // the client's end ends its clone connections
			if !tc.cloned {
				// A clone member is chosen (and counted on its pool) in
				// CLIENT_ACCEPTED, before the answers came back.
				for _, name := range []string{"/Common/ids_cs", "/Common/ids_ss"} {
					if ps, _ := p.Pool(name); ps.ServerSide.TotConns != 0 {
						t.Errorf("%s: %d connections, want none", name, ps.ServerSide.TotConns)
					}
				}
				return
			}
			if got := cs.wait(t, 1); len(got) != 1 || got[0] != strings.Join(reqs, "") {
				t.Errorf("clientside copy = %q, want the two requests on one connection", got)
			}
			got := ss.wait(t, 1)
			if len(got) != 1 || strings.Count(got[0], "\r\nX-Forwarded-For: 127.0.0.1\r\n") != 2 ||
				!strings.HasPrefix(got[0], "GET /one HTTP/1.1\r\n") || !strings.HasSuffix(got[0], "\r\n\r\nhello") {
				t.Errorf("serverside copy = %q, want both requests as the member got them", got)
			}
			eventually(t, "clone counters", func() bool {
				st, _ := p.Virtual("/Common/vs")
				return st.Clone != nil && st.Clone.Conns == 2 && st.Clone.Dropped == 0
			})
			for _, name := range []string{"/Common/ids_cs", "/Common/ids_ss"} {
				if ps, _ := p.Pool(name); ps.ServerSide.TotConns != 1 {
					t.Errorf("%s: %d connections, want 1", name, ps.ServerSide.TotConns)
				}
			}
		})
	}
}

// TestRuleCloneUDP: on a UDP virtual a rule's clone in CLIENT_ACCEPTED
// copies the flow's datagrams to the clone member, clientside as the
// client sent them and in `serverside { }` as the member got them (after
// CLIENT_DATA rewrote them), on one socket per flow; the answers still
// come from the default pool.
func TestRuleCloneUDP(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.189.2.2:5300", "S")
	cs := startUDPCollector(t, "127.189.2.3:5301")
	ss := startUDPCollector(t, "127.189.2.4:5302")
	p, _ := newPlane(t)
	cfg := udpBasic("127.189.2.1:53", "127.189.2.2:5300")
	addClonePool(cfg, "/Common/cs", "127.189.2.3:5301")
	addClonePool(cfg, "/Common/ss", "127.189.2.4:5302")
	r, _ := compileRules(t, "when CLIENT_ACCEPTED { if { [UDP::client_port] != 1 } { clone pool /Common/cs\n serverside { clone pool /Common/ss member 127.189.2.4 5302 } } }\n"+
		`when CLIENT_DATA { UDP::payload replace 0 0 "r-" }`)
	setVirtualRules(cfg, "/Common/vs", r)
	mustApply(t, p, cfg)

	udpCloneSides(t, p, "127.189.2.1:53", cs, ss) // clone_udp_test.go
}

// TestRuleCloneHTTPRequest: on an http virtual a rule's clone in
// HTTP_REQUEST copies the client's connection from the request it ran
// on: that request and the client's later ones go to one clone
// connection (clientside as the client sent them, in `serverside { }`
// with the header the rule inserted), the requests before it do not; a
// clone run again on a later request opens no second copy; a clone in
// HTTP_RESPONSE, too late for the request, is skipped and counted as
// dropped (once per response) while the client is served.
func TestRuleCloneHTTPRequest(t *testing.T) {
	const base = "127.193.1."
	vs, member := base+"1:8080", base+"2:9000"
	startL7Member(t, member, "M1")
	cs := startCloneCollector(t, base+"3:9001")
	ss := startCloneCollector(t, base+"4:9001")
	p, _ := newPlane(t)
	rule := "when HTTP_REQUEST { HTTP::header insert X-Tap [HTTP::uri]\n" +
		" if { [HTTP::uri] starts_with \"/tap\" } { clone pool /Common/ids_cs\n serverside { clone pool /Common/ids_ss member " + base + "4 9001 } } }\n" +
		"when HTTP_RESPONSE { clone pool /Common/ids_cs }"
	cfg := l7Config(t, vs, false, mblb.HTTPOptions{}, rule, member)
	addClonePool(cfg, "/Common/ids_cs", base+"3:9001")
	addClonePool(cfg, "/Common/ids_ss", base+"4:9001")
	mustApply(t, p, cfg)

	c := dialHTTPVS(t, vs)
	reqs := []string{
		"GET /one HTTP/1.1\r\nHost: a\r\n\r\n",
		"POST /tap HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
		"GET /three HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /tap2 HTTP/1.1\r\nHost: a\r\n\r\n",
	}
	for _, r := range reqs {
		resp, body, err := c.do(r)
		if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(body, "M1 ") {
			t.Fatalf("request through the virtual: %v %q", err, body)
		}
	}
	c.c.Close()
	if got := cs.wait(t, 1); len(got) != 1 || got[0] != strings.Join(reqs[1:], "") {
		t.Errorf("clientside copy = %q, want the requests from /tap on, on one connection", got)
	}
	got := ss.wait(t, 1)
	if len(got) != 1 || strings.Contains(got[0], "/one") || strings.Count(got[0], "\r\nX-Tap: ") != 3 ||
		!strings.HasPrefix(got[0], "POST /tap HTTP/1.1\r\n") || !strings.Contains(got[0], "X-Tap: /three\r\n") {
		t.Errorf("serverside copy = %q, want the requests from /tap on as the member got them", got)
	}
	eventually(t, "clone counters", func() bool {
		st, _ := p.Virtual("/Common/vs")
		return st.Clone != nil && st.Clone.Conns == 2 && st.Clone.Dropped == uint64(len(reqs))
	})
}

// TestRuleCloneDiameter: on a virtual with the diameter profile a rule's
// clone in CLIENT_ACCEPTED gets each message of the client as it sent
// it (the CER and two CCRs), and a serverside clone pool each message
// as the member got it; the answers come from the member alone.
func TestRuleCloneDiameter(t *testing.T) {
	t.Parallel()
	a := diamServer(t, "127.193.2.10:3868", "member-a.example", false)
	cs := startCloneCollector(t, "127.193.2.20:9000")
	ss := startCloneCollector(t, "127.193.2.21:9000")
	p, _ := newPlane(t)
	cfg := basic("127.193.2.1:3868", a.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	diamVirtual(t, cfg, "/Common/vs", "127.193.2.1:3868", "/Common/pool", diameter.Options{}, "when CLIENT_ACCEPTED { clone pool /Common/ids }")
	addClonePool(cfg, "/Common/ids", "127.193.2.20:9000")
	withClone(cfg, "/Common/clone_s", true, "127.193.2.21:9000")
	mustApply(t, p, cfg)
	c, _ := diamClient(t, "127.193.2.1:3868", "client.example")
	ccrs(t, c, "client.example", "client.example;clone;1", "client.example;clone;2")
	c.Close()
	got := first(cs.wait(t, 1))
	if n := strings.Count(got, "client.example;clone;"); n != 2 || !strings.Contains(got, "client.example") {
		t.Errorf("rule's clone got %d CCRs in %q, want the CER and both", n, got)
	}
	if msgs := diamMessages(got); msgs != 3 {
		t.Errorf("rule's clone got %d messages, want 3 (CER, 2 CCR)", msgs)
	}
	if got := first(ss.wait(t, 1)); strings.Count(got, "client.example;clone;") != 2 {
		t.Errorf("serverside clone pool got %q, want both CCRs", got)
	}
}

// diamMessages counts the Diameter messages in b by their length fields.
func diamMessages(b string) int {
	n := 0
	for len(b) >= 20 && n < 100 {
		l := int(b[1])<<16 | int(b[2])<<8 | int(b[3])
		if l < 20 || l > len(b) {
			return -1
		}
		b = b[l:]
		n++
	}
	if len(b) != 0 {
		return -1
	}
	return n
}

// TestRuleCloneFIX: on a virtual with the fix profile a rule's clone in
// CLIENT_ACCEPTED gets the client's messages as it sent them.
func TestRuleCloneFIX(t *testing.T) {
	t.Parallel()
	a := startAcceptor(t, "127.193.3.10:9878", "member-a")
	cs := startCloneCollector(t, "127.193.3.20:9000")
	p, _ := newPlane(t)
	cfg := basic("127.193.3.1:9878", a.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	fixVirtual(t, cfg, "/Common/vs", "127.193.3.1:9878", "/Common/pool", fix.Options{FullLogon: true}, "when CLIENT_ACCEPTED { clone pool /Common/ids }")
	addClonePool(cfg, "/Common/ids", "127.193.3.20:9000")
	mustApply(t, p, cfg)
	c := fixDial(t, "127.193.3.1:9878")
	c.Send(fixLogon("FIX.4.4", "BANZAI"))
	recvHas(t, c, "35=A", "49=member-a")
	c.Send(fixOrder("FIX.4.4", "BANZAI"))
	recvHas(t, c, "35=8", "11=ORD1")
	c.Close()
	if got, want := first(cs.wait(t, 1)), string(fixLogon("FIX.4.4", "BANZAI"))+string(fixOrder("FIX.4.4", "BANZAI")); got != want {
		t.Errorf("rule's clone got %q, want %q", got, want)
	}
}

// TestRuleCloneMQTT: on a virtual with the mqtt profile a rule's clone
// in CLIENT_ACCEPTED gets the client's packets as it sent them.
func TestRuleCloneMQTT(t *testing.T) {
	t.Parallel()
	a := startBroker(t, "127.193.4.10:1883", "member-a")
	cs := startCloneCollector(t, "127.193.4.20:9000")
	p, _ := newPlane(t)
	cfg := basic("127.193.4.1:1883", a.Addr())
	mqttVirtual(t, cfg, "/Common/vs", "127.193.4.1:1883", "/Common/pool", "when CLIENT_ACCEPTED { clone pool /Common/ids }")
	addClonePool(cfg, "/Common/ids", "127.193.4.20:9000")
	mustApply(t, p, cfg)
	connect := mqtttest.Connect("cloned")
	cl, _ := mqttDial(t, "127.193.4.1:1883", connect)
	pub := &mqtt.Packet{Type: mqtt.PUBLISH, Topic: "room", Payload: []byte("x")}
	if err := cl.Send(pub); err != nil {
		t.Fatal(err)
	}
	if err := cl.Send(&mqtt.Packet{Type: mqtt.PINGREQ}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Expect(mqtt.PINGRESP, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	enc := func(p *mqtt.Packet) string { return string(p.Encode(nil, mqtt.V311)) }
	if got, want := first(cs.wait(t, 1)), enc(connect)+enc(pub)+enc(&mqtt.Packet{Type: mqtt.PINGREQ}); got != want {
		t.Errorf("rule's clone got %q, want %q", got, want)
	}
}

// TestRuleCloneHTTP2Lanes: an HTTP/2 client whose streams run on several
// engine lanes at once: a rule's clone in HTTP_REQUEST of one stream
// copies that request and every later stream of the client, whichever
// lane it runs on (lanes opened before the clone too), each whole and as
// HTTP/1.1, to one clone connection; the streams before it are not
// copied.
func TestRuleCloneHTTP2Lanes(t *testing.T) {
	const vs = "127.193.5.1:8080"
	// A member slow enough that a burst's streams overlap.
	ln, err := net.Listen("tcp", "127.193.5.2:9000")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(30 * time.Millisecond)
		fmt.Fprintf(w, "M1 %s %s %s", r.Proto, r.Method, r.RequestURI)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	cs := startCloneCollector(t, "127.193.5.3:9001")
	rule := "when HTTP_REQUEST { if { [HTTP::path] eq \"/tap\" } { serverside { clone pool /Common/ids } } }"
	cfg := l7Config(t, vs, true, mblb.HTTPOptions{}, rule, "127.193.5.2:9000")
	cfg.Virtuals["/Common/vs"].HTTP2 = &HTTP2{Always: true, Config: h2gw.Config{MaxConcurrentStreams: 32}}
	addClonePool(cfg, "/Common/ids", "127.193.5.3:9001")
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	client := h2Client(t)
	get := func(path string) error {
		req, _ := http.NewRequest("GET", "http://"+vs+path, nil)
		// A gRPC stream has a lane of its own: a burst opens lanes.
		req.Header.Set("Content-Type", "application/grpc")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.Proto != "HTTP/2.0" || !strings.HasPrefix(string(b), "M1 HTTP/1.1 GET "+path) {
			return fmt.Errorf("%s: %s %q", path, resp.Proto, b)
		}
		return nil
	}
	burst := func(prefix string) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for i := 0; i < 16; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := get(fmt.Sprintf("/%s%02d", prefix, i)); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	burst("p") // lanes opened before the clone
	if err := get("/tap"); err != nil {
		t.Fatal(err)
	}
	burst("c")
	// Once more after the burst: every lane has the clone by now.
	if err := get("/after"); err != nil {
		t.Fatal(err)
	}
	client.CloseIdleConnections()
	got := cs.wait(t, 1)
	if len(got) != 1 || strings.Contains(got[0], "GET /p") || !strings.HasPrefix(got[0], "GET /tap HTTP/1.1\r\n") ||
		strings.Count(got[0], "GET /c") != 16 || !strings.Contains(got[0], "GET /after HTTP/1.1\r\n") {
		t.Errorf("clone got %d connections: %q; want /tap, the 16 streams and /after on one", len(got), got)
	}
	eventually(t, "clone counters", func() bool {
		st, _ := p.Virtual("/Common/vs")
		return st.Clone != nil && st.Clone.Conns == 1 && st.Clone.Dropped == 0
	})
}

// TestRuleCloneHTTPRequestData: a clone in HTTP_REQUEST_DATA, after
// HTTP::collect read the body, copies that request (the rule read its
// body to decide) and the client's later ones, as one in HTTP_REQUEST
// does; the requests before it are not copied.
func TestRuleCloneHTTPRequestData(t *testing.T) {
	const base = "127.197.80."
	vs, member := base+"1:8080", base+"2:9000"
	startL7Member(t, member, "M1")
	cs := startCloneCollector(t, base+"3:9001")
	p, _ := newPlane(t)
	rule := "when HTTP_REQUEST { if { [HTTP::method] eq \"POST\" } { HTTP::collect 6 } }\n" +
		"when HTTP_REQUEST_DATA { if { [HTTP::payload] contains \"attack\" } { clone pool /Common/ids_cs } }"
	cfg := l7Config(t, vs, false, mblb.HTTPOptions{}, rule, member)
	addClonePool(cfg, "/Common/ids_cs", base+"3:9001")
	mustApply(t, p, cfg)

	c := dialHTTPVS(t, vs)
	reqs := []string{
		"POST /calm HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\npeace!",
		"POST /bad HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\nattack",
		"GET /after HTTP/1.1\r\nHost: a\r\n\r\n",
	}
	for _, r := range reqs {
		resp, body, err := c.do(r)
		if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(body, "M1 ") {
			t.Fatalf("request through the virtual: %v %q", err, body)
		}
	}
	c.c.Close()
	if got := cs.wait(t, 1); len(got) != 1 || got[0] != strings.Join(reqs[1:], "") {
		t.Errorf("clientside copy = %q, want the requests from /bad on, on one connection", got)
	}
	eventually(t, "clone counters", func() bool {
		st, _ := p.Virtual("/Common/vs")
		return st.Clone != nil && st.Clone.Conns == 1 && st.Clone.Dropped == 0
	})
}
