package objects

import "testing"

// TestPolicyWordsAreOneEach: every word of a policy condition or action
// belongs to one property, so that reading `http-uri path starts-with`
// cannot take a word for another group's.
func TestPolicyWordsAreOneEach(t *testing.T) {
	for _, k := range []*Kind{policyConditionKind(), policyActionKind()} {
		seen := map[string]string{}
		for _, p := range k.Props {
			words := []string{p.Name}
			if p.Type == TFlag {
				words = p.Enum
			}
			for _, w := range words {
				if w == "" {
					continue
				}
				if other, ok := seen[w]; ok {
					t.Errorf("%s: %q is a word of %s and of %s", k.Title, w, other, p.Name)
				}
				seen[w] = p.Name
			}
		}
	}
}

// TestPolicyRoundTrip: a policy as BIG-IP writes it reads back and
// prints the same, word order included.
func TestPolicyRoundTrip(t *testing.T) {
	const text = `ltm policy /Common/p {
    controls { forwarding }
    requires { tcp }
    rules {
        r {
            actions {
                0 {
                    shutdown
                    client-accepted
                    connection
                }
            }
            conditions {
                0 {
                    tcp
                    client-accepted
                    address
                    not
                    matches
                    datagroup /Common/rfc1918
                }
            }
        }
    }
    status published
    strategy /Common/first-match
}
`
	objs, err := Default.ReadConfig("p.conf", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := Format(objs[0], PrintOpts{}); got != text {
		t.Fatalf("printed\n%s\nwant\n%s", got, text)
	}
}
