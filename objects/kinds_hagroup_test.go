package objects

import (
	"testing"
)

func TestHAGroupKind(t *testing.T) {
	pool := "ltm pool /Common/web { }\n"
	hg := func(body string) string { return pool + "sys ha-group /Common/hg1 {\n" + body + "\n}\n" }
	for _, tc := range []struct {
		name, text string
		refused    string // substring of the refusal, "" when it loads
	}{
		{"full", hg("    active-bonus 20\n    pools {\n        /Common/web {\n            weight 50\n            minimum-threshold 1\n            sufficient-threshold 2\n        }\n    }") +
			"cm traffic-group /Common/tg1 { ha-group /Common/hg1 }\n", ""},
		{"v12 threshold", hg("    pools {\n        /Common/web {\n            weight 30\n            threshold 1\n        }\n    }"), ""},
		{"weight under 10", hg("    pools {\n        /Common/web {\n            weight 5\n        }\n    }"), "weight"},
		{"weight over 100", hg("    pools {\n        /Common/web {\n            weight 101\n        }\n    }"), "weight"},
		{"active bonus over 100", hg("    active-bonus 101"), "active-bonus"},
		{"missing pool", hg("    pools {\n        /Common/nope {\n            weight 50\n        }\n    }"), "nope"},
		{"sufficient below minimum", hg("    pools {\n        /Common/web {\n            weight 50\n            minimum-threshold 3\n            sufficient-threshold 2\n        }\n    }"), "below minimum-threshold"},
		{"sufficient not a count", hg("    pools {\n        /Common/web {\n            sufficient-threshold some\n        }\n    }"), "must be all or a number"},
		{"missing ha group", "cm traffic-group /Common/tg1 { ha-group /Common/nope }\n", "nope"},
	} {
		checkRefusal(t, tc.name, tc.text, tc.refused)
	}
}
