package cluster

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/openltm/openltm/cluster/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestGroupFiles: a generation that sets the group's files names them by
// content, the generations after it carry them forward, another device
// reads them back (a file larger than one etcd request too), a file is
// stored once, replaced ones go, and a commit that loses a conflict
// changes none of it.
func TestGroupFiles(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{Host: "127.18.3.1"})
	ctx := testCtx(t)
	a := connect(t, srv, "bigip1").Log("dg1")
	b := connect(t, srv, "bigip2").Log("dg1")
	big := make([]byte, 2*ChunkSize+17)
	for i := range big {
		big[i] = byte(rand.IntN(256))
	}
	put := func(name string, data []byte) File {
		t.Helper()
		f, err := a.PutFile(ctx, "geoip", name, data)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	city, asn := put("City.mmdb", big), put("ASN.mmdb", []byte("asn v1"))
	if again := put("City.mmdb", big); again != city {
		t.Fatalf("stored twice: %+v %+v", again, city)
	}
	asn2 := put("ASN.mmdb", []byte("asn v2"))
	steps := []struct {
		name   string
		commit func(base uint64) (uint64, error)
		want   []File
	}{
		{"config only", func(base uint64) (uint64, error) {
			return a.Commit(ctx, base, gen("admin", "ltm pool /Common/p1 { }\n"))
		}, nil},
		{"files set", func(base uint64) (uint64, error) {
			return a.CommitFiles(ctx, base, gen("admin", "ltm pool /Common/p1 { }\n"), []File{city, asn})
		}, []File{city, asn}},
		{"carried forward by another device", func(base uint64) (uint64, error) {
			return b.Commit(ctx, base, gen("bob", "ltm pool /Common/p2 { }\n"))
		}, []File{city, asn}},
		{"one replaced", func(base uint64) (uint64, error) {
			return a.CommitFiles(ctx, base, gen("admin", "ltm pool /Common/p2 { }\n"), []File{city, asn2})
		}, []File{city, asn2}},
		{"a losing commit changes nothing", func(base uint64) (uint64, error) {
			_, err := b.CommitFiles(ctx, base-1, gen("bob", "ltm pool /Common/p3 { }\n"), nil)
			if err == nil {
				return 0, fmt.Errorf("a stale commit succeeded")
			}
			return base, nil
		}, []File{city, asn2}},
	}
	var head uint64
	for _, st := range steps {
		id, err := st.commit(head)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		head = id
		g, err := b.Get(ctx, id)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if fmt.Sprint(g.Files) != fmt.Sprint(st.want) {
			t.Fatalf("%s: files %+v, want %+v", st.name, g.Files, st.want)
		}
		for _, f := range g.Files {
			data, err := b.GetFile(ctx, f)
			if err != nil || len(data) != f.Size {
				t.Fatalf("%s: read %s: %v", st.name, f.Name, err)
			}
		}
	}
	if data, _ := b.GetFile(ctx, city); !bytes.Equal(data, big) {
		t.Fatal("the large file read back differs")
	}
	// The replaced file is gone; reading it says so.
	if _, err := b.GetFile(ctx, asn); err == nil || !strings.Contains(err.Error(), "no longer kept") {
		t.Fatalf("replaced file: %v", err)
	}
	resp, err := a.c.cli.Get(ctx, keyPrefix+"files/dg1/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(resp.Kvs); n != 4+2 { // City: 3 chunks and n; ASN v2: 1 chunk and n
		t.Fatalf("%d file keys kept, want 6 (the current files only)", n)
	}
	// A damaged file is refused.
	if _, err := a.c.cli.Put(ctx, a.filePrefix(asn2.SHA256)+"c000000", "tampered"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetFile(ctx, asn2); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("damaged file: %v", err)
	}
}
