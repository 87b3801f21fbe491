package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane"
)

// OCSPAnswers prints the OCSP answers of `show ltm clientssl
// ocsp-stapling-responses` (server false: what client-ssl profiles staple,
// one block per profile and certificate) or `show ltm serverssl
// ocsp-responses` (server true: what server-ssl profiles checked their
// members' certificates by, one block per profile and certificate serial
// number). [M: BIG-IP's layout of the first is not documented and it has
// no second; the table follows its other show blocks (a title naming the
// profile and certificate, then one line per fact, times in UTC); the
// field-fmt form follows openltm's other field-fmt shows (a block per
// profile, its answers nested by certificate, times in RFC 3339 UTC so
// that each value is one word).]
func OCSPAnswers(w io.Writer, rs []dataplane.StapledOCSP, server bool, o Options) error {
	if o.FieldFmt {
		return ocspFields(w, rs, server, o)
	}
	p := &printer{w: w}
	for _, r := range rs {
		ocspTable(p, r, server, o)
	}
	return p.err
}

// ocspID names an answer within its profile: the sys file ssl-cert a
// client-ssl profile staples for, the serial number of a member's
// certificate.
func ocspID(r dataplane.StapledOCSP, server bool, o Options) string {
	if server {
		return r.Serial
	}
	return o.rel(r.Cert)
}

func ocspTable(p *printer, r dataplane.StapledOCSP, server bool, o Options) {
	rule := strings.Repeat("-", 72)
	when := func(t time.Time) string {
		if t.IsZero() {
			return "none"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	vs := make([]string, len(r.Virtuals))
	for i, v := range r.Virtuals {
		vs[i] = o.rel(v)
	}
	title := "Ltm::ClientSSL OCSP Stapling Response: "
	if server {
		title = "Ltm::ServerSSL OCSP Response: "
	}
	p.f("%s\n%s%s %s\n%s\n", rule, title, o.rel(r.Profile), ocspID(r, server, o), rule)
	line := func(k, v string) { p.f("  %-20s%s\n", k, v) }
	line("Virtual Servers", strings.Join(vs, " "))
	if server {
		line("Members", ocspMembers(r))
	}
	line("Subject", r.Subject)
	line("Serial Number", r.Serial)
	line("Validator", r.Validator)
	line("Responder", orText(r.Responder, "none yet"))
	line("Status", orNone(r.Status))
	line("This Update", when(r.ThisUpdate))
	line("Next Update", when(r.NextUpdate))
	line("Fetched", when(r.Fetched))
	line("Expires", when(r.Expires))
	line("Renewal", when(r.Renew))
	line("Last Error", orNone(r.Err))
}

// ocspFields prints one field-fmt block per profile, in the order the
// answers come (by profile).
func ocspFields(w io.Writer, rs []dataplane.StapledOCSP, server bool, o Options) error {
	kind := "ltm clientssl ocsp-stapling-responses"
	if server {
		kind = "ltm serverssl ocsp-responses"
	}
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return "none"
		}
		return t.UTC().Format(time.RFC3339)
	}
	for i := 0; i < len(rs); {
		j := i
		f := newFields()
		vs := make([]string, len(rs[i].Virtuals))
		for k, v := range rs[i].Virtuals {
			vs[k] = o.rel(v)
		}
		f.set("virtual-servers", strings.Join(vs, " "))
		for ; j < len(rs) && rs[j].Profile == rs[i].Profile; j++ {
			r := rs[j]
			a := newFields()
			if !server {
				a.set("cert", o.rel(r.Cert))
			} else {
				a.set("members", ocspMembers(r))
			}
			vkind, vname, _ := strings.Cut(r.Validator, " ")
			a.set("validator", o.rel(vname))
			a.set("validator-kind", vkind)
			a.set("subject", r.Subject)
			a.set("serial-number", r.Serial)
			a.set("responder", orText(r.Responder, "none"))
			a.set("status", orNone(r.Status))
			a.set("this-update", stamp(r.ThisUpdate))
			a.set("next-update", stamp(r.NextUpdate))
			a.set("fetched", stamp(r.Fetched))
			a.set("expires", stamp(r.Expires))
			a.set("renewal", stamp(r.Renew))
			a.set("last-error", orNone(r.Err))
			f.block("certificates", ocspID(r, server, o), a)
		}
		if err := writeObject(w, kind, o.rel(rs[i].Profile), f); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// ocspMembers is the member addresses that presented a certificate,
// "none" before any, "(and N more)" past the ones kept.
func ocspMembers(r dataplane.StapledOCSP) string {
	if len(r.Members) == 0 {
		return "none"
	}
	ms := make([]string, len(r.Members))
	for i, m := range r.Members {
		ms[i] = m.String()
	}
	s := strings.Join(ms, " ")
	if r.MoreMembers > 0 {
		s += fmt.Sprintf(" (and %d more)", r.MoreMembers)
	}
	return s
}

func orText(s, none string) string {
	if s == "" {
		return none
	}
	return s
}
