package daemon

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openltm/openltm/objects"
)

// benchConfig is n pools of two members and n virtual servers using them,
// each with a tcp profile and source-addr persistence.
func benchConfig(b *testing.B, n int) *objects.Config {
	b.Helper()
	var sb strings.Builder
	for i := range n {
		a, c := 1+i/250, i%250
		fmt.Fprintf(&sb, "ltm pool /Common/p%d {\n    members {\n        /Common/10.1.%d.%d:80 { }\n        /Common/10.2.%d.%d:80 { }\n    }\n    monitor /Common/tcp\n}\n", i, a, c, a, c)
		fmt.Fprintf(&sb, "ltm virtual /Common/v%d {\n    destination /Common/127.1.%d.%d:80\n    pool /Common/p%d\n    persist {\n        /Common/source_addr {\n            default yes\n        }\n    }\n    profiles {\n        /Common/tcp { }\n    }\n    source-address-translation {\n        type automap\n    }\n}\n", i, a, c, i)
	}
	objs, err := objects.Default.ReadConfig("bench", []byte(sb.String()), nil)
	if err != nil {
		b.Fatal(err)
	}
	cfg := objects.Default.Builtins()
	for _, o := range objs {
		cfg.Put(o)
	}
	if err := cfg.Complete(objects.Default); err != nil {
		b.Fatal(err)
	}
	return cfg
}

// BenchmarkTranslate measures one translation of 5,000 pools and 5,000
// virtual servers (10,000 objects and their nodes), the work every commit
// does at least once.
func BenchmarkTranslate(b *testing.B) {
	cfg := benchConfig(b, 5000)
	b.ReportAllocs()
	for b.Loop() {
		dc, skipped := Translate(objects.Default, cfg)
		if len(dc.Virtuals) != 5000 || len(skipped) != 0 {
			b.Fatalf("%d virtuals, skipped %v", len(dc.Virtuals), skipped[:min(3, len(skipped))])
		}
	}
}
