package sipmsg

import "testing"

func TestRegisterExpires(t *testing.T) {
	const head = "REGISTER sip:r SIP/2.0\r\nVia: SIP/2.0/UDP c;branch=z9hG4bKa\r\nTo: <sip:a@r>\r\n"
	for _, tc := range []struct {
		name, fields string
		want         int64
	}{
		{"none: the default", "", 3600},
		{"Expires field", "Expires: 60\r\n", 60},
		{"Expires 0", "Expires: 0\r\nContact: <sip:a@c>\r\n", 0},
		{"contact parameter beats the field", "Expires: 60\r\nContact: <sip:a@c>;expires=30\r\n", 30},
		{"contact parameter 0 deregisters", "Expires: 60\r\nContact: <sip:a@c>;expires=0\r\n", 0},
		{"compact form, parameters before it", "m: \"A, B\" <sip:a@c;transport=udp>;q=0.5;EXPIRES = 45;x\r\n", 45},
		{"URI without brackets", "Contact: sip:a@c;expires=20\r\n", 20},
		{"URI parameter inside brackets is not the contact's", "Expires: 90\r\nContact: <sip:a@c;expires=5>\r\n", 90},
		{"longest of several contacts", "Contact: <sip:a@c>;expires=10, <sip:a@d>;expires=70\r\nContact: <sip:a@e>;expires=0\r\n", 70},
		{"a contact without the parameter takes the field", "Expires: 100\r\nContact: <sip:a@c>;expires=10, <sip:a@d>\r\n", 100},
		{"star removes all", "Expires: 0\r\nContact: *\r\n", 0},
		{"not a number: ignored", "Expires: soon\r\nContact: <sip:a@c>;expires=x\r\n", 3600},
		{"too large: capped", "Contact: <sip:a@c>;expires=99999999999\r\n", 1<<32 - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse([]byte(head + tc.fields + "Content-Length: 0\r\n\r\n"))
			if err != nil {
				t.Fatal(err)
			}
			if got := m.RegisterExpires(3600); got != tc.want {
				t.Fatalf("RegisterExpires = %d, want %d", got, tc.want)
			}
		})
	}
}
