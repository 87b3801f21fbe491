package daemon

import (
	"strings"
	"testing"
)

// TestPolicyLifecycle: a policy is drafted, published and attached as
// on BIG-IP 12.1 and later; what BIG-IP refuses is refused whichever way
// it comes, and changes nothing.
func TestPolicyLifecycle(t *testing.T) {
	t.Parallel()
	const (
		pools  = "create ltm pool web members add { 127.44.0.11:80 }; create ltm pool api members add { 127.44.0.12:80 }"
		draft  = "create ltm policy Drafts/route requires add { http } rules add { r1 { ordinal 1 conditions add { 0 { http-uri path starts-with values { /api } } } actions add { 0 { forward select pool api } } } }"
		legacy = "create ltm policy route legacy requires add { http } rules add { r1 { conditions add { 0 { http-host host values { a.example } } } actions add { 0 { forward select pool api } } } }"
		tcpPol = "create ltm policy inside legacy requires add { tcp } rules add { r1 { conditions add { 0 { tcp address matches values { 10.0.0.0/8 } } } actions add { 0 { forward select pool api } } } }"
		vsHTTP = "create ltm virtual vs destination 127.44.0.10:80 pool web profiles replace-all-with { tcp http } policies add { route }"
		vsTCP  = "create ltm virtual vs destination 127.44.0.10:80 pool web profiles replace-all-with { tcp }"
	)
	published := "ltm pool /Common/web { }\nltm pool /Common/api { }\n" +
		"ltm policy /Common/route {\n    requires { http }\n    rules {\n        r1 {\n            actions {\n                0 {\n                    forward\n                    select\n                    pool /Common/api\n                }\n            }\n            conditions {\n                0 {\n                    http-uri\n                    path\n                    starts-with\n                    values { /api }\n                }\n            }\n            ordinal 1\n        }\n    }\n    strategy /Common/first-match\n}\n"
	cases := []struct {
		name  string
		setup []string
		cmd   string // "load:TEXT" loads TEXT as a file
		err   string // "" : accepted
		check map[string]string
	}{
		{"a draft", []string{pools}, draft, "", map[string]string{"list ltm policy Drafts/route status": "status draft"}},
		{"requires, controls and strategy as BIG-IP fills them in", []string{pools},
			"create ltm policy Drafts/filled rules add { r { conditions add { 0 { tcp address values { 10.0.0.0/8 } } 1 { http-method values { GET } } } actions add { 0 { forward select pool api } } } }", "",
			map[string]string{"list ltm policy Drafts/filled requires": "requires { http tcp }", "list ltm policy Drafts/filled controls": "controls { forwarding }",
				"list ltm policy Drafts/filled strategy": "strategy first-match"}},
		{"what was written is kept", []string{pools, "create ltm policy Drafts/kept controls add { caching } rules add { r { actions add { 0 { forward reset } } } }"},
			"modify ltm policy Drafts/kept rules add { s { conditions add { 0 { http-uri path values { /x } } } actions add { 0 { forward select pool api } } } }", "",
			map[string]string{"list ltm policy Drafts/kept controls": "controls { caching forwarding }", "list ltm policy Drafts/kept requires": "requires { http }"}},
		{"outside Drafts", []string{pools}, strings.Replace(draft, "Drafts/route", "route", 1), "must be created as a draft", nil},
		{"legacy", []string{pools}, legacy, "", map[string]string{"list ltm policy route status": "status legacy"}},
		{"a description that reads legacy", []string{pools}, "create ltm policy Drafts/d description legacy", "",
			map[string]string{"list ltm policy Drafts/d": "description legacy"}},
		{"publish", []string{pools, draft}, "publish ltm policy Drafts/route", "", map[string]string{
			"list ltm policy": "ltm policy route {", "list ltm policy one-line": "!Drafts", "list ltm policy route status": "status published"}},
		{"publish over the published", []string{pools, legacy, vsHTTP, "modify ltm policy route create-draft",
			"modify ltm policy Drafts/route rules modify { r1 { actions replace-all-with { 0 { forward reset } } } }"},
			"publish ltm policy Drafts/route", "", map[string]string{"list ltm policy route rules": "reset", "list ltm policy one-line": "!Drafts"}},
		{"publish a published one", []string{pools, legacy}, "publish ltm policy route", "is not a draft", nil},
		{"modify a published one", []string{pools, legacy}, "modify ltm policy route strategy all-match", "is published and cannot be modified", nil},
		{"modify a published one among drafts", []string{pools, legacy, draft}, "modify ltm policy Drafts/route route description x", "is published and cannot be modified", nil},
		{"copy-from", []string{pools, legacy}, "create ltm policy Drafts/copy copy-from route description copied", "",
			map[string]string{"list ltm policy Drafts/copy rules": "a.example", "list ltm policy Drafts/copy status description": "description copied\n    status draft"}},
		{"copy-from nothing", []string{pools}, "create ltm policy Drafts/copy copy-from nothing", "was not found", nil},
		{"a second draft", []string{pools, legacy, "modify ltm policy route create-draft"}, "modify ltm policy route create-draft", "already exists", nil},
		{"attach a draft", []string{pools, draft}, strings.Replace(vsHTTP, "{ route }", "{ Drafts/route }", 1), "is a draft", nil},
		{"attach to a virtual without http", []string{pools, legacy}, strings.Replace(vsHTTP, "tcp http", "tcp", 1), "requires an http profile", nil},
		{"a tcp policy on a tcp virtual", []string{pools, tcpPol}, vsTCP + " policies add { inside }", "", nil},
		{"a message-based virtual", []string{pools, tcpPol}, vsTCP + " profiles replace-all-with { tcp mblb } policies add { inside }", "", map[string]string{
			"show ltm virtual vs": "openltm does not run it: policy /Common/inside is on a message-based virtual server"}},
		{"delete a policy in use", []string{pools, legacy, vsHTTP}, "delete ltm policy route", "cannot be deleted because it is in use by a Virtual Server (/Common/vs)", nil},
		{"delete a pool a policy forwards to", []string{pools, legacy}, "delete ltm pool api", "cannot be deleted because it is in use by a Policy (/Common/route)", nil},
		{"missing target", []string{pools}, "create ltm policy Drafts/bad rules add { r { actions add { 0 { forward select } } } }",
			"Policy '/Common/Drafts/bad', rule 'r'; missing or invalid target.", nil},
		{"a word BIG-IP does not have", []string{pools}, "create ltm policy Drafts/bad rules add { r { actions add { 0 { forward choose pool api } } } }",
			`"choose" unknown property`, nil},
		{"load a published policy and a virtual", nil, "load:" + published +
			"ltm virtual /Common/vs {\n    destination /Common/127.44.0.10:80\n    policies {\n        /Common/route { }\n    }\n    pool /Common/web\n    profiles {\n        /Common/http { }\n        /Common/tcp { }\n    }\n}\n",
			"", map[string]string{"list ltm virtual vs policies": "route { }"}},
		{"load a bad policy", nil, "load:" + strings.Replace(published, "                    pool /Common/api\n", "", 1),
			"missing or invalid target", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			e, _ := openWithPlane(t, dir)
			s := e.NewSession("admin").(*Session)
			for _, l := range c.setup {
				for _, one := range strings.Split(l, "; ") {
					if _, err := run(t, s, one); err != "" {
						t.Fatalf("%s: %s", one, err)
					}
				}
			}
			before, _ := run(t, s, "list ltm")
			err := runOrLoad(t, s, dir, c.cmd)
			if c.err == "" && err != "" || c.err != "" && !strings.Contains(err, c.err) {
				t.Fatalf("%s: error %q, want %q", c.cmd, err, c.err)
			}
			if c.err != "" {
				if after, _ := run(t, s, "list ltm"); after != before {
					t.Fatalf("a refused command changed the configuration:\n%s\nto\n%s", before, after)
				}
			}
			for q, want := range c.check {
				out, err := run(t, s, q)
				neg := strings.HasPrefix(want, "!")
				if err != "" || strings.Contains(out, strings.TrimPrefix(want, "!")) == neg {
					t.Errorf("%s: %q %s, want %q", q, out, err, want)
				}
			}
		})
	}
}
