package daemon

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/netip"
	"sort"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/persist"
)

// TestMirrorEveryMode: with `mirror enabled`, the virtual servers of every
// persistence kind that keeps records are mirrored (dest-addr, hash with
// its payload key, ssl, msrdp and sip as well as source-addr), and their
// records, sent through JSON as publish sends them to etcd, load back on
// the device taking over with their mode, key (a payload key that is no
// UTF-8 too), pool and member. A profile without mirror is not mirrored.
func TestMirrorEveryMode(t *testing.T) {
	e, p := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.7.4.11:80 127.7.4.12:80 }",
		"create ltm persistence source-addr m_src mirror enabled",
		"create ltm persistence dest-addr m_dest mirror enabled",
		"create ltm persistence hash m_hash mirror enabled hash-offset 2 hash-length 4",
		"create ltm persistence ssl m_ssl mirror enabled",
		"create ltm persistence msrdp m_rdp mirror enabled",
		"create ltm persistence sip m_sip mirror enabled",
		"create ltm persistence dest-addr plain_dest",
		"create ltm virtual v_src destination 127.7.4.1:80 pool p persist replace-all-with { m_src { default yes } }",
		"create ltm virtual v_dest destination 127.7.4.2:80 pool p persist replace-all-with { m_dest { default yes } }",
		"create ltm virtual v_hash destination 127.7.4.3:80 pool p persist replace-all-with { m_hash { default yes } }",
		"create ltm virtual v_ssl destination 127.7.4.4:443 pool p persist replace-all-with { m_ssl { default yes } }",
		"create ltm virtual v_rdp destination 127.7.4.5:3389 pool p persist replace-all-with { m_rdp { default yes } }",
		"create ltm virtual v_sip destination 127.7.4.6:5060 pool p profiles replace-all-with { tcp { } mblb { } sip { } } persist replace-all-with { m_sip { default yes } }",
		"create ltm virtual v_plain destination 127.7.4.7:80 pool p persist replace-all-with { plain_dest { default yes } }",
	} {
		if out, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		} else if out != "" {
			t.Fatalf("%s: %s", c, out)
		}
	}
	got := mirrored(e.Config())
	var names []string
	for v := range got {
		names = append(names, v)
	}
	sort.Strings(names)
	want := []string{"/Common/v_dest", "/Common/v_hash", "/Common/v_rdp", "/Common/v_sip", "/Common/v_src", "/Common/v_ssl"}
	if len(names) != len(want) {
		t.Fatalf("mirrored %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("mirrored %v, want %v", names, want)
		}
	}

	member := netip.MustParseAddrPort("127.7.4.12:80")
	recs := []dataplane.PersistKey{
		{Virtual: "/Common/v_src", Mode: persist.SourceAddress, Key: "127.7.4.200"},
		{Virtual: "/Common/v_dest", Mode: persist.DestAddress, Key: "127.7.4.2"},
		{Virtual: "/Common/v_hash", Mode: persist.Hash, Key: "acct"},
		{Virtual: "/Common/v_hash", Mode: persist.Hash, Key: "\xff\x00\xfe1"},
		{Virtual: "/Common/v_ssl", Mode: persist.SSLSessionID, Key: "5e7f00aa"},
		{Virtual: "/Common/v_rdp", Mode: persist.MSRDP, Key: "alice"},
		{Virtual: "/Common/v_sip", Mode: persist.SIP, Key: "a84b4c76e66710@pc33"},
	}
	for _, k := range recs {
		k.Pool, k.Timeout = "/Common/p", time.Hour
		if err := p.PersistSave(k, "", member); err != nil {
			t.Fatalf("%+v: %v", k, err)
		}
	}
	// What the active device publishes, as etcd holds it.
	var held []heldRec
	p.PersistRecords(persist.Filter{}, func(r *persist.Record) bool {
		b, err := json.Marshal(mirrorOf(r))
		if err != nil {
			t.Fatal(err)
		}
		var m mirrorRec
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		held = append(held, heldRec{key: m.id(), rec: m})
		return true
	})
	if len(held) != len(recs) {
		t.Fatalf("%d records published, want %d", len(held), len(recs))
	}
	// The device taking over starts with none and loads them.
	p.DeletePersistRecords(persist.Filter{})
	mr := &mirror{h: &clusterHook{e: e, log: slog.New(slog.NewTextHandler(io.Discard, nil))}, sent: map[string]mirrorRec{}}
	if n := mr.load(held); n != len(recs) {
		t.Fatalf("loaded %d records, want %d", n, len(recs))
	}
	for _, k := range recs {
		k.Pool = "/Common/p"
		pool, m, ok := p.PersistLookup(k)
		if !ok || pool != "/Common/p" || m != member {
			t.Errorf("%s %s %q after the takeover: %s %s %v", k.Virtual, k.Mode, k.Key, pool, m, ok)
		}
	}
}
