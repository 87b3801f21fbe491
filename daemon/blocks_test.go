package daemon

import (
	"testing"

	"github.com/openltm/openltm/objects"
)

// blockValue reads `KIND x { PROP BLOCK }` as tmsh would and returns the
// block's value as it applies (nil when block is ""), so that the
// translators are tested on what the reader gives them.
func blockValue(t *testing.T, kind, prop, block string) *objects.Value {
	t.Helper()
	if block == "" {
		return nil
	}
	l := objects.Default.ReadText("test.conf", []byte(kind+" /Common/x { "+prop+" "+block+" }\n"), "/Common")
	if r := l.Findings.Refused(); len(r) > 0 || len(l.Objects) != 1 {
		t.Fatalf("%s %s: %v", prop, block, l.Findings)
	}
	return objects.NewConfig().Effective(l.Objects[0], prop)
}
