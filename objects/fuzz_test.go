package objects

import (
	"os"
	"testing"
)

// FuzzLoadSaveLoad checks that whatever text loads, its saved form (with
// the virtual addresses its virtual servers make) loads back to the same
// saved form, and that nothing panics on any input.
func FuzzLoadSaveLoad(f *testing.F) {
	if b, err := os.ReadFile("testdata/sample.conf"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("ltm pool /Common/p { members { /Common/10.1.1.1:80 { address 10.1.1.1 } } monitor /Common/http }"))
	f.Add([]byte("ltm virtual /Common/v { destination /Common/dead:beef::1.443 profiles { /Common/tcp { } } disabled }"))
	f.Add([]byte("gtm topology ldns: region /Common/r server: region /Common/r { order 2 score 500 }"))
	f.Add([]byte("ltm pool /Common/a { }\nltm policy /Common/p { controls { forwarding } requires { http } rules { r { actions { 0 { forward select pool /Common/a } 1 { http-header replace name X-A value \"tcl:[IP::client_addr]\" } } conditions { 0 { http-uri path not starts-with values { /api \"/b c\" } } 1 { http-header name X-B case-sensitive values { x } } } ordinal 1 } } strategy /Common/first-match }\nltm virtual /Common/v { destination /Common/10.0.0.1:80 policies { /Common/p { } } profiles { /Common/http { } /Common/tcp { } } }"))
	f.Fuzz(func(t *testing.T, src []byte) {
		objs, err := Default.ReadConfig("f.conf", src, nil)
		if err != nil {
			return
		}
		c := Default.Builtins()
		for _, o := range objs {
			c.Put(o)
		}
		if c.Complete(Default) != nil {
			return
		}
		CompleteVirtualAddresses(Default, nil, c)
		if c.Validate(Default) != nil {
			return
		}
		text := c.Text()
		objs2, err := Default.ReadConfig("saved.conf", []byte(text), nil)
		if err != nil {
			t.Fatalf("saved text does not load: %v\n%s", err, text)
		}
		c2 := Default.Builtins()
		for _, o := range objs2 {
			c2.Put(o)
		}
		if err := c2.Complete(Default); err != nil {
			t.Fatalf("saved text does not complete: %v", err)
		}
		CompleteVirtualAddresses(Default, nil, c2) // adds nothing: the first pass did

		if text2 := c2.Text(); text2 != text {
			t.Fatalf("save → load → save differs:\n%s\n---\n%s", text, text2)
		}
	})
}
