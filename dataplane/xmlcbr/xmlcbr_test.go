package xmlcbr

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const soapDoc = `<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:eai="urn:eai">
  <soapenv:Header/>
  <soapenv:Body>
    <eai:Order priority="high">
      <FinanceObject>Route to Financing</FinanceObject>
      <Amount>250</Amount>
    </eai:Order>
  </soapenv:Body>
</soapenv:Envelope>`

var soapNS = map[string]string{"soap": "http://schemas.xmlsoap.org/soap/envelope/", "e": "urn:eai"}

func TestCompile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ns      map[string]string
		queries []string
		err     string
	}{
		{"plain", nil, []string{"//FinanceObject", "/a/b[@c='d']"}, ""},
		{"mapped prefix", soapNS, []string{"/soap:Envelope/soap:Body/e:Order"}, ""},
		{"prefix in a literal is not a prefix", nil, []string{"//a[. = 'x:y']"}, ""},
		{"axis is not a prefix", nil, []string{"/child::a/descendant::b"}, ""},
		{"unmapped prefix", nil, []string{"//soap:Body"}, `xpath query "//soap:Body" does not compile: prefix "soap" is not in the profile's namespace-mappings`},
		{"syntax", nil, []string{"//a[@b="}, `xpath query "//a[@b=" does not compile`},
		{"unknown function", nil, []string{"nosuch(//a)"}, `xpath query "nosuch(//a)" does not compile`},
		{"empty", nil, []string{" "}, "xpath-queries has an empty query"},
		{"four", nil, []string{"/a", "/b", "/c", "/d"}, "xpath-queries has 4 queries: a profile holds at most 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile("/Common/x", tc.ns, tc.queries, false)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want %q", err, tc.err)
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ns       map[string]string
		queries  []string
		multiple bool
		body     string
		want     []Match
		err      error
	}{
		{"element text", nil, []string{"//FinanceObject"}, false, soapDoc,
			[]Match{{"//FinanceObject", "Route to Financing"}}, nil},
		{"namespaced path and attribute", soapNS, []string{"/soap:Envelope/soap:Body/e:Order/@priority"}, false, soapDoc,
			[]Match{{"/soap:Envelope/soap:Body/e:Order/@priority", "high"}}, nil},
		{"first match only", nil, []string{"//Nothing", "//Amount", "//FinanceObject"}, false, soapDoc,
			[]Match{{"//Amount", "250"}}, nil},
		{"multiple matches", nil, []string{"//Nothing", "//Amount", "//FinanceObject"}, true, soapDoc,
			[]Match{{"//Amount", "250"}, {"//FinanceObject", "Route to Financing"}}, nil},
		{"boolean", nil, []string{"//Amount > 100"}, false, soapDoc, []Match{{"//Amount > 100", "true"}}, nil},
		{"false boolean", nil, []string{"//Amount > 1000"}, false, soapDoc, nil, nil},
		{"count", nil, []string{"count(//Amount)"}, false, soapDoc, []Match{{"count(//Amount)", "1"}}, nil},
		{"no match", nil, []string{"//Missing"}, false, "<a><b/></a>", nil, nil},
		{"malformed", nil, []string{"//a"}, false, "<a><b></a>", nil, ErrMalformed},
		{"two roots", nil, []string{"//a"}, false, "<a/><a/>", nil, ErrMalformed},
		{"text outside the root", nil, []string{"//a"}, false, "junk<a/>", nil, ErrMalformed},
		{"empty", nil, []string{"//a"}, false, "  ", nil, ErrMalformed},
		{"text after the root", nil, []string{"//a"}, false, "<a/>junk<b/>x", nil, ErrMalformed},
		{"text between", nil, []string{"//a"}, false, "<?xml version='1.0'?>junk<a/>", nil, ErrMalformed},
		{"not XML", nil, []string{"//a"}, false, `{"a": 1}`, nil, ErrMalformed},
		{"undeclared entity", nil, []string{"//a"}, false, "<a>&xxe;</a>", nil, ErrMalformed},
		{"external entity not fetched", nil, []string{"//a"}, false, `<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>`, nil, ErrMalformed},
		{"declared UTF-16 in UTF-8 bytes", nil, []string{"//a"}, false, `<?xml version="1.0" encoding="UTF-16"?><a/>`, nil, ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Compile("/Common/x", tc.ns, tc.queries, tc.multiple)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Evaluate([]byte(tc.body), nil)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("matches %q, want %q", got, tc.want)
			}
		})
	}
}

func TestIsXMLType(t *testing.T) {
	for ct, want := range map[string]bool{
		"text/xml": true, "application/xml; charset=utf-8": true, "application/soap+xml": true,
		"Application/XML": true, "image/svg+xml": true,
		"application/json": false, "text/html": false, "xml": false, "": false, "application/x-www-form-urlencoded": false,
	} {
		if got := IsXMLType([]byte(ct)); got != want {
			t.Errorf("IsXMLType(%q) = %v, want %v", ct, got, want)
		}
	}
}

func TestPrefixesOf(t *testing.T) {
	for q, want := range map[string][]string{
		"/soap:Envelope/soap:Body":      {"soap", "soap"},
		"//a[@xsi:type='x:y']":          {"xsi"},
		"/child::a/ns:*":                {"ns"},
		"//a":                           nil,
		`//a[contains(., "p:q")]/b:c`:   {"b"},
		"count(//n1:a) + count(//n2:b)": {"n1", "n2"},
	} {
		if got := prefixesOf(q); !reflect.DeepEqual(got, want) {
			t.Errorf("prefixesOf(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestCounts(t *testing.T) {
	var c Counts
	for _, n := range []int{0, 1, 1, 2, 3} {
		c.Count(n, nil)
	}
	c.Count(0, ErrMalformed)
	got := [...]uint64{c.Inspected.Load(), c.OneMatch.Load(), c.TwoMatches.Load(), c.ThreeMatches.Load(), c.NoMatch.Load(), c.Malformed.Load()}
	if got != [...]uint64{6, 2, 1, 1, 1, 1} {
		t.Fatalf("counts %v", got)
	}
	c.Reset()
	if c.Inspected.Load() != 0 || c.Malformed.Load() != 0 {
		t.Fatal("not reset")
	}
}
