package objects

import (
	"strings"
	"testing"
)

func TestMapSecrets(t *testing.T) {
	s := Default
	objs, err := s.ReadConfig("t.conf", []byte(`ltm monitor mysql /Common/db {
    defaults-from /Common/mysql
    password pw1
    username probe
}
ltm persistence cookie /Common/ck {
    cookie-encryption required
    cookie-encryption-passphrase "two words"
}
ltm profile client-ssl /Common/cs {
    cert-key-chain {
        a { cert /Common/a.crt key /Common/a.key passphrase kp1 }
        b { cert /Common/b.crt key /Common/b.key }
    }
    passphrase none
}
ltm pool /Common/p {
    description password
}
sys crypto cert-validator ocsp /Common/v1 {
    signer-key-passphrase sk1
}
ltm profile ocsp-stapling-params /Common/pp1 {
    signer-key-passphrase sk2
}
auth user u1 {
    password clear-for-hashing
}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	seal := func(p *Prop, v string) (string, error) { return "$M$xx$" + strings.ReplaceAll(v, " ", "_"), nil }
	want := map[string][]string{
		"ltm monitor mysql":                {"password $M$xx$pw1"},
		"ltm persistence cookie":           {"cookie-encryption-passphrase $M$xx$two_words"},
		"ltm profile client-ssl":           {"passphrase $M$xx$kp1", "passphrase none"},
		"ltm pool":                         {"description password"},
		"sys crypto cert-validator ocsp":   {"signer-key-passphrase $M$xx$sk1"},
		"ltm profile ocsp-stapling-params": {"signer-key-passphrase $M$xx$sk2"},
		"auth user":                        {"password clear-for-hashing"},
	}
	for _, o := range objs {
		n, err := MapSecrets(o, seal)
		if err != nil {
			t.Fatal(err)
		}
		c := NewConfig()
		c.Put(n)
		text := c.Text()
		for _, w := range want[o.Kind.Key()] {
			if !strings.Contains(text, w) {
				t.Errorf("%s: want %q in\n%s", o.Kind.Key(), w, text)
			}
		}
		if changed := n != o; changed != (o.Kind.Key() != "ltm pool" && o.Kind.Key() != "auth user") {
			t.Errorf("%s: changed=%v", o.Kind.Key(), changed)
		}
		// The original is never modified.
		c2 := NewConfig()
		c2.Put(o)
		if strings.Contains(c2.Text(), "$M$") {
			t.Errorf("%s: MapSecrets changed the object it was given", o.Kind.Key())
		}
	}
}
