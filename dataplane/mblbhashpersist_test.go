package dataplane

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/persist"
)

// TestMBLBHashPayloadPersistence: a hash profile's payload key on a
// message virtual (each newline-framed message's key, whatever client
// connection it comes on) and on an HTTP virtual (each request's key, in
// its head) keeps a key on one member; the keys spread over the pool and
// are recorded, one record per key.
func TestMBLBHashPayloadPersistence(t *testing.T) {
	t.Parallel()
	pl, err := persist.NewPayload(0, 0, `acct=`, `[;&\s]`, 1024)
	if err != nil {
		t.Fatal(err)
	}
	prof := &Persistence{Profile: "/Common/hash_payload", Method: PersistHash, Timeout: 300 * time.Second, Payload: pl}
	keys := []string{"1001", "1002", "1003", "1004", "1005", "1006"}
	check := func(t *testing.T, p *Plane, ask func(conn int, key string) string) {
		t.Helper()
		first := map[string]string{}
		spread := map[string]bool{}
		for round := 0; round < 3; round++ {
			for j := range keys {
				k := keys[j]
				if round == 1 {
					k = keys[len(keys)-1-j] // balancing alone would not repeat
				}
				got := ask(round%2, k)
				if first[k] == "" {
					first[k] = got
					spread[got] = true
				} else if got != first[k] {
					t.Fatalf("key %s went to %s, first to %s", k, got, first[k])
				}
			}
		}
		if len(spread) < 2 {
			t.Errorf("six keys all went to %v", spread)
		}
		checkPayloadRecords(t, p, first, false)
	}

	t.Run("messages", func(t *testing.T) {
		startServer(t, "127.11.6.11:9000", "S1")
		startServer(t, "127.11.6.12:9000", "S2")
		startServer(t, "127.11.6.13:9000", "S3")
		p, _ := newPlane(t)
		cfg := mblbConfig("127.11.6.1:9000", &MBLB{Request: mblb.Framing{Mode: mblb.Delimiter, Delimiter: []byte("\n")}},
			"127.11.6.11:9000", "127.11.6.12:9000", "127.11.6.13:9000")
		cfg.Virtuals["/Common/vs"].Persist = prof
		mustApply(t, p, cfg)
		conns := []*client{dialVS(t, "127.11.6.1:9000"), dialVS(t, "127.11.6.1:9000")}
		check(t, p, func(i int, k string) string {
			return strings.Fields(conns[i].mustAsk("op=get;acct=" + k + ";"))[0]
		})
	})
	t.Run("HTTP", func(t *testing.T) {
		startHTTPServer(t, "127.11.6.21:80", "W1")
		startHTTPServer(t, "127.11.6.22:80", "W2")
		startHTTPServer(t, "127.11.6.23:80", "W3")
		p, _ := newPlane(t)
		cfg := mblbConfig("127.11.6.2:80", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}, OneConnect: &OneConnect{MaxSize: 4}},
			"127.11.6.21:80", "127.11.6.22:80", "127.11.6.23:80")
		cfg.Virtuals["/Common/vs"].Persist = prof
		mustApply(t, p, cfg)
		conns := []*httpRuleClient{dialHTTPVS(t, "127.11.6.2:80"), dialHTTPVS(t, "127.11.6.2:80")}
		check(t, p, func(i int, k string) string {
			r, body, err := conns[i].do(httpReq("a", "/q?acct="+k+"&x=1", "X-Acct: acct="+k+"\r\n"))
			if err != nil || r.StatusCode != http.StatusOK {
				t.Fatalf("%s: %v", k, err)
			}
			return strings.Fields(body)[0]
		})
	})
}
