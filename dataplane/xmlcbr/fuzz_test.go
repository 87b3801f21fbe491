package xmlcbr

import "testing"

// FuzzEvaluate feeds the body handling any bytes: it must never panic,
// and a match must come from one of the profile's queries.
func FuzzEvaluate(f *testing.F) {
	for _, s := range []string{soapDoc, "<a><b c='d'>e</b></a>", "<a>", "", "<!DOCTYPE a [<!ENTITY e 'x'>]><a>&e;</a>",
		"<?xml version='1.0' encoding='latin1'?><a/>", "<a xmlns:p='u'><p:b/></a>", "<a><![CDATA[x]]></a>",
		"\xfe\xff\x00<\x00a\x00/\x00>", "<\x00a\x00/\x00>\x00", "\xff\xfe<\x00"} {
		f.Add([]byte(s))
	}
	p, err := Compile("/Common/fuzz", soapNS, []string{"//FinanceObject", "/soap:Envelope/soap:Body/e:Order/@priority", "count(//*) > 3"}, true)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ms, err := p.Evaluate(body, nil)
		if err != nil && len(ms) != 0 {
			t.Fatalf("matches %q with error %v", ms, err)
		}
		if len(ms) > MaxMatches {
			t.Fatalf("%d matches", len(ms))
		}
		for _, m := range ms {
			found := false
			for _, q := range p.Queries {
				found = found || q.Text == m.Query
			}
			if !found {
				t.Fatalf("match of query %q not in the profile", m.Query)
			}
		}
	})
}
