package htmlfilter

import (
	"strings"
	"testing"
)

func run(t *testing.T, rs []Rule, in string, split int, onTag func(*Tag), onComment func(*Comment)) string {
	t.Helper()
	c, err := Compile(rs)
	if err != nil {
		t.Fatal(err)
	}
	p := c.New(onTag, onComment)
	var out []byte
	for i := 0; i < len(in); i += split {
		out = p.Write(out, []byte(in[i:min(i+split, len(in))]))
	}
	return string(p.Close(out))
}

func TestRules(t *testing.T) {
	page := `<!DOCTYPE html><html><head><title>a <b> c</title><!-- keep me --></head>` +
		`<body class="x"><img src="a.png" alt='A "q"'><a href="/one" id=one>1</a>` +
		`<script>if (a<b) { x = "<a href=z>"; }</script><a href='/two'>2</a></body></html>`
	cases := []struct {
		name  string
		rules []Rule
		want  string
	}{
		{"none", nil, page},
		{"append", []Rule{{Name: "r", Kind: TagAppendHTML, TagName: "head", Text: "<meta x>"}},
			strings.Replace(page, "<head>", "<head><meta x>", 1)},
		{"prepend end tag", []Rule{{Name: "r", Kind: TagPrependHTML, TagName: "/body", Text: "<p>end</p>"}},
			strings.Replace(page, "</body>", "<p>end</p></body>", 1)},
		{"append by attribute", []Rule{{Name: "r", Kind: TagAppendHTML, TagName: "A", AttrName: "id", AttrValue: "one", Text: "!"}},
			strings.Replace(page, "id=one>", "id=one>!", 1)},
		{"attribute value differs", []Rule{{Name: "r", Kind: TagAppendHTML, TagName: "a", AttrName: "id", AttrValue: "two", Text: "!"}}, page},
		{"remove tag", []Rule{{Name: "r", Kind: TagRemove, TagName: "img"}},
			strings.Replace(page, `<img src="a.png" alt='A "q"'>`, "", 1)},
		{"remove attribute", []Rule{{Name: "r", Kind: TagRemoveAttribute, TagName: "a", RemoveAttr: "href"}},
			strings.NewReplacer(`<a href="/one" id=one>`, `<a id="one">`, `<a href='/two'>`, `<a>`).Replace(page)},
		{"remove quoted attribute kept escaped", []Rule{{Name: "r", Kind: TagRemoveAttribute, TagName: "img", RemoveAttr: "src"}},
			strings.Replace(page, `<img src="a.png" alt='A "q"'>`, `<img alt="A &#34;q&#34;">`, 1)},
		{"remove comments", []Rule{{Name: "r", Kind: CommentRemove}}, strings.Replace(page, "<!-- keep me -->", "", 1)},
		{"several rules in order", []Rule{
			{Name: "a", Kind: TagAppendHTML, TagName: "title", Text: "[1]"},
			{Name: "b", Kind: TagPrependHTML, TagName: "title", Text: "[0]"},
			{Name: "c", Kind: TagAppendHTML, TagName: "title", Text: "[2]"},
		}, strings.Replace(page, "<title>", "[0]<title>[1][2]", 1)},
		{"raw text not matched", []Rule{{Name: "r", Kind: TagRemove, TagName: "b"}}, page},
	}
	for _, c := range cases {
		for _, split := range []int{len(page), 1, 3, 7, 16} {
			if got := run(t, c.rules, page, split, nil, nil); got != c.want {
				t.Errorf("%s (parts of %d):\n got %s\nwant %s", c.name, split, got, c.want)
			}
		}
	}
}

func TestEvents(t *testing.T) {
	page := `<p><a href="/x">x</a><!-- c1 --><a href="/y" rel=me>y</a><!--c2--></p>`
	rs := []Rule{{Name: "ev", Kind: TagRaiseEvent, TagName: "a"}, {Name: "cev", Kind: CommentRaiseEvent}}
	var names []string
	onTag := func(tg *Tag) {
		if tg.Rule() != "ev" {
			t.Errorf("rule %q", tg.Rule())
		}
		names = append(names, strings.Join(tg.AttrNames(), ","))
		if v, _ := tg.Attr("href"); v == "/x" {
			tg.SetAttr("href", "/z?a=1&b=2", false)
			tg.SetAttr("data-n", "1", true)
			tg.Prepend("[")
			tg.Append("]")
		} else {
			tg.Remove()
		}
	}
	onComment := func(c *Comment) {
		if c.Text() == "<!-- c1 -->" {
			c.Replace("<!-- one -->")
		} else {
			c.Remove()
		}
	}
	want := `<p>[<a href="/z?a=1&amp;b=2" data-n="1">]x</a><!-- one -->y</a></p>`
	for _, split := range []int{len(page), 1, 2, 5} {
		names = names[:0]
		if got := run(t, rs, page, split, onTag, onComment); got != want {
			t.Errorf("parts of %d:\n got %s\nwant %s", split, got, want)
		}
		if strings.Join(names, " ") != "href href,rel" {
			t.Errorf("attribute names %q", names)
		}
	}
}

func TestDisable(t *testing.T) {
	c, _ := Compile([]Rule{{Name: "r", Kind: TagRemove, TagName: "b"}})
	p := c.New(nil, nil)
	out := p.Write(nil, []byte("<b>1</b>"))
	p.SetEnabled(false)
	out = p.Close(p.Write(out, []byte("<b>2</b>")))
	if string(out) != "1</b><b>2</b>" {
		t.Errorf("got %q", out)
	}
}

func TestHoldBounded(t *testing.T) {
	c, _ := Compile([]Rule{{Name: "r", Kind: CommentRemove}})
	p := c.New(nil, nil)
	in := "<!-- " + strings.Repeat("x", MaxHold+10)
	out := p.Write(nil, []byte(in))
	if len(p.held) != 0 || string(out) != in {
		t.Errorf("held %d, passed %d of %d", len(p.held), len(out), len(in))
	}
}

func TestCompileRefuses(t *testing.T) {
	for _, r := range []Rule{
		{Name: "a", Kind: TagRemove},
		{Name: "b", Kind: TagAppendHTML, TagName: "p"},
		{Name: "c", Kind: TagRemoveAttribute, TagName: "p"},
		{Name: "d", Kind: TagRemove, TagName: "a b"},
	} {
		if _, err := Compile([]Rule{r}); err == nil {
			t.Errorf("%s %s: compiled", r.Kind, r.Name)
		}
	}
}

// TestNoAllocUnmatched: tags no rule names cost no allocation.
func TestNoAllocUnmatched(t *testing.T) {
	c, _ := Compile([]Rule{{Name: "r", Kind: TagRemove, TagName: "img"}})
	p := c.New(nil, nil)
	in := []byte(`<div class="a"><P>text</P><span>more</span></div>`)
	out := make([]byte, 0, 4*len(in))
	if n := testing.AllocsPerRun(20, func() { out = p.Write(out[:0], in) }); n != 0 {
		t.Errorf("%v allocations per body", n)
	}
}
