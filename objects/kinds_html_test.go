package objects

import (
	"strings"
	"testing"
)

// TestHTMLKinds: an html profile and its rules load, are acted on (no
// "kept" warning) and are written back as read; a profile naming a rule
// that does not exist, or a rule of a kind with a misspelt block
// setting, is refused.
func TestHTMLKinds(t *testing.T) {
	text := `ltm html-rule tag-append-html /Common/inject {
    action {
        text "<script src=\"/x.js\"></script>"
    }
    match {
        tag-name /head
    }
}
ltm html-rule tag-raise-event /Common/ev {
    match {
        attribute-name href
        tag-name a
    }
}
ltm html-rule comment-remove /Common/nocom { }
ltm html-rule tag-remove-attribute /Common/noid {
    action {
        attribute-name id
    }
    match {
        tag-name p
    }
}
ltm profile html /Common/myhtml {
    defaults-from /Common/html
    rules { /Common/inject /Common/ev /Common/nocom /Common/noid }
}
`
	l := readAndCheck(text)
	if err := l.Err(true); err != nil {
		t.Fatalf("a valid file: %v", err)
	}
	cfg := NewConfig()
	for _, o := range l.Objects {
		cfg.Put(o)
	}
	if err := cfg.Validate(Default); err != nil {
		t.Fatalf("validate: %v", err)
	}
	out := cfg.Text()
	for _, want := range []string{`text "<script src=\"/x.js\"></script>"`, "tag-name /head", "ltm html-rule comment-remove /Common/nocom", "/Common/noid"} {
		if !strings.Contains(out, want) {
			t.Errorf("written back without %q:\n%s", want, out)
		}
	}
	for _, tc := range []struct{ name, text string }{
		{"missing rule", "ltm profile html /Common/h { rules { /Common/nosuch } }\n"},
		{"unknown match setting", "ltm html-rule tag-remove /Common/r { match { tag /p } }\n"},
		{"action on a rule without one", "ltm html-rule tag-remove /Common/r { action { text x } match { tag-name p } }\n"},
	} {
		l := readAndCheck(tc.text)
		err := l.Err(true)
		if err == nil {
			cfg := NewConfig()
			for _, o := range l.Objects {
				cfg.Put(o)
			}
			err = cfg.Validate(Default)
		}
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}
