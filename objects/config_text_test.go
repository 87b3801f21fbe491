package objects

import (
	"os"
	"strings"
	"testing"

	"github.com/openltm/openltm/grammar"
)

func loadText(t *testing.T, name string, src []byte) (*Config, []string) {
	t.Helper()
	var warns []string
	objs, err := Default.ReadConfig(name, src, func(p grammar.Pos, m string) { warns = append(warns, p.String()+": "+m) })
	if err != nil {
		t.Fatal(err)
	}
	c := Default.Builtins()
	for _, o := range objs {
		c.Put(o)
	}
	if err := c.Complete(Default); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(Default); err != nil {
		t.Fatal(err)
	}
	return c, warns
}

func TestSaveLoadSaveIsIdentical(t *testing.T) {
	src, err := os.ReadFile("testdata/sample.conf")
	if err != nil {
		t.Fatal(err)
	}
	c, warns := loadText(t, "sample.conf", src)
	text1 := c.Text()
	c2, _ := loadText(t, "saved.conf", []byte(text1))
	text2 := c2.Text()
	if text1 != text2 {
		t.Fatalf("save → load → save differs:\n--- first\n%s\n--- second\n%s", text1, text2)
	}
	for _, want := range []string{
		"/Common/app1:cslistener {\n            address 127.0.10.21\n", // member address filled from its node
		"ltm node /Common/127.0.10.11 {",                               // node auto-created
		"    ignore-persisted-weight enabled\n",                        // F5 property openltm does not act on, kept
		"apm policy access-policy /Common/ap1 {",                       // unknown kind kept
		"    # braces in comments } are kept {\n",                      // rule body byte for byte
		`send "GET /health HTTP/1.1\r\nHost: shop.example.test\r\nConnection: close\r\n\r\n"`,
		"destination /Common/127.0.10.1:http",
		"monitor /Common/web_mon and /Common/tcp",
	} {
		if !strings.Contains(text1, want) {
			t.Errorf("saved text lacks %q:\n%s", want, text1)
		}
	}
	if len(warns) != 2 {
		t.Errorf("want 2 warnings (an F5 property openltm does not act on, an apm kind), got %q", warns)
	}
}

// A modified built-in is saved, as BIG-IP saves it, loads back, and still
// cannot be deleted.
func TestModifiedBuiltinIsSaved(t *testing.T) {
	c := Default.Builtins()
	k := Default.Kind("cm traffic-group")
	tg := c.Get(k, "/Common/traffic-group-1").Clone()
	tg.Props["ha-order"] = &Value{List: []string{"bigip1", "bigip2"}}
	c.Put(tg)
	text := c.Text()
	if !strings.Contains(text, "cm traffic-group /Common/traffic-group-1 {") || strings.Contains(text, "/Common/tcp {") {
		t.Fatalf("saved text:\n%s", text)
	}
	c2, _ := loadText(t, "saved.conf", []byte(text))
	if c2.Text() != text {
		t.Fatalf("save → load → save differs:\n%s\n---\n%s", text, c2.Text())
	}
	if err := c2.CheckDelete(Default, c2.Get(k, "/Common/traffic-group-1")); err == nil {
		t.Fatal("a modified built-in could be deleted")
	}
}
