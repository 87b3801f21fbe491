package render

import (
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// TestOCSPAnswers: the OCSP shows' layouts. field-fmt groups a profile's
// answers in one block, nested by certificate (client-ssl) or serial
// number (server-ssl), times as RFC 3339 UTC, none for what is not
// there; the table gives one block per answer.
func TestOCSPAnswers(t *testing.T) {
	at := time.Date(2026, 12, 7, 9, 24, 57, 0, time.FixedZone("x", 3600))
	good := tlsprof.OCSPResponse{Cert: "/Common/a.crt", Subject: "CN=a", Serial: "1001", Validator: "cert-validator /Common/v",
		Responder: "http://127.0.0.1:8080", Status: "good", ThisUpdate: at, Fetched: at, Expires: at.Add(time.Hour), Renew: at.Add(30 * time.Minute)}
	down := tlsprof.OCSPResponse{Cert: "/Common/b.crt", Subject: "CN=b", Serial: "1002", Validator: "ocsp-stapling-params /Common/p",
		Renew: at, Err: "responder down"}
	rs := []dataplane.StapledOCSP{
		{Profile: "/Common/cs", Virtuals: []string{"/Common/vs1", "/Other/vs2"}, OCSPResponse: good},
		{Profile: "/Common/cs", Virtuals: []string{"/Common/vs1", "/Other/vs2"}, OCSPResponse: down},
		{Profile: "/Common/cs2", Virtuals: []string{"/Common/vs3"}, OCSPResponse: good},
	}
	var b strings.Builder
	if err := OCSPAnswers(&b, rs, false, Options{FieldFmt: true, Folder: "/Common"}); err != nil {
		t.Fatal(err)
	}
	want := `ltm clientssl ocsp-stapling-responses cs {
    certificates {
        a.crt {
            cert a.crt
            expires 2026-12-07T09:24:57Z
            fetched 2026-12-07T08:24:57Z
            last-error none
            next-update none
            renewal 2026-12-07T08:54:57Z
            responder http://127.0.0.1:8080
            serial-number 1001
            status good
            subject CN=a
            this-update 2026-12-07T08:24:57Z
            validator v
            validator-kind cert-validator
        }
        b.crt {
            cert b.crt
            expires none
            fetched none
            last-error responder down
            next-update none
            renewal 2026-12-07T08:24:57Z
            responder none
            serial-number 1002
            status none
            subject CN=b
            this-update none
            validator p
            validator-kind ocsp-stapling-params
        }
    }
    virtual-servers vs1 /Other/vs2
}
ltm clientssl ocsp-stapling-responses cs2 {
`
	if got := b.String(); !strings.HasPrefix(got, want) || strings.Count(got, "ltm clientssl ocsp-stapling-responses ") != 2 {
		t.Errorf("field-fmt:\n%s\nwant it to start\n%s", got, want)
	}
	b.Reset()
	if err := OCSPAnswers(&b, rs[:1], true, Options{Folder: "/Common"}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Ltm::ServerSSL OCSP Response: cs 1001\n", "  Virtual Servers     vs1 /Other/vs2\n", "  Next Update         none\n",
		"  Fetched             2026-12-07 08:24:57 UTC\n", "  Last Error          none\n"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("table: want %q in\n%s", w, b.String())
		}
	}
}
