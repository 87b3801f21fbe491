package dataplane

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

var (
	traceSessionID = regexp.MustCompile(`(?m)^\s*session_id \(len=(\d+)\):\s*([0-9A-Fa-f]*)\s*$`)
	ruleSessionID  = regexp.MustCompile(`SID=([0-9a-f]*)\|([0-9a-f]*)\|(\S+)`)
)

// sClient runs openssl s_client against addr with args, sending req, and
// returns the hello session IDs its trace printed (the ClientHello's, then
// the ServerHello's, upper-case hex as OpenSSL prints them; "" for none)
// and the SID=current|desired|version line the rule answered, for each
// connection (-reconnect makes several).
func sClient(t *testing.T, addr, req string, args ...string) (hellos [][2]string, answers [][3]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "openssl", append([]string{"s_client", "-connect", addr, "-trace", "-ign_eof"}, args...)...)
	cmd.Stdin = strings.NewReader(req)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("openssl s_client %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	ids := traceSessionID.FindAllStringSubmatch(out.String(), -1)
	for i := 0; i+1 < len(ids); i += 2 {
		hellos = append(hellos, [2]string{ids[i][2], ids[i+1][2]})
	}
	for _, m := range ruleSessionID.FindAllStringSubmatch(out.String(), -1) {
		answers = append(answers, [3]string{m[1], m[2], m[3]})
	}
	if len(answers) == 0 {
		t.Fatalf("openssl s_client %s: no answer from the rule\n%s", strings.Join(args, " "), out.String())
	}
	return hellos, answers
}

// TestTLSSessionIDOpenSSL reads SSL::sessionid and SSL::sessionid desired
// on a client-ssl HTTP virtual for real openssl s_client handshakes: the
// rule must answer the session IDs the ServerHello and ClientHello carried
// on the wire, as the client's trace shows them: none on a TLS 1.2 full
// handshake (a client offers none and the server, keeping no session ID
// cache, assigns none), the echoed ID on a TLS 1.2 ticket resumption, and
// the client's compatibility ID echoed in TLS 1.3.
func TestTLSSessionIDOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl is not installed")
	}
	cert, key, _ := testCert(t, "www.example")
	p, _ := newPlane(t)
	cfg := mblbConfig("127.0.146.10:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.0.146.11:80")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when HTTP_REQUEST {
    HTTP::respond 200 content "SID=[SSL::sessionid]|[SSL::sessionid desired]|[SSL::cipher version]\n"
}`)
	b, err := (&tlsprof.ClientSSL{Name: "/Common/cs", CertKeyChain: []tlsprof.CertKeyChain{{Cert: cert, Key: key}},
		AuthenticateDepth: -1, SessionTicket: true}).Build()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Virtuals["/Common/vs"].TLS = &TLS{Client: b.Config}
	// A second virtual with its own build of the profile: its ticket keys
	// are not the first one's, so it cannot resume the first one's sessions.
	b2, err := (&tlsprof.ClientSSL{Name: "/Common/cs", CertKeyChain: []tlsprof.CertKeyChain{{Cert: cert, Key: key}},
		AuthenticateDepth: -1, SessionTicket: true}).Build()
	if err != nil {
		t.Fatal(err)
	}
	vs2 := *cfg.Virtuals["/Common/vs"]
	vs2.Name, vs2.Destination, vs2.TLS = "/Common/vs2", ap("127.0.146.20:443"), &TLS{Client: b2.Config}
	cfg.Virtuals["/Common/vs2"] = &vs2
	mustApply(t, p, cfg)
	req := "GET / HTTP/1.1\r\nHost: www.example\r\nConnection: close\r\n\r\n"

	check := func(name string, hellos [][2]string, answers [][3]string, version string) {
		t.Helper()
		if len(hellos) != len(answers) {
			t.Fatalf("%s: %d handshakes traced, %d answers: %q %q", name, len(hellos), len(answers), hellos, answers)
		}
		for i, a := range answers {
			if a[2] != version {
				t.Errorf("%s #%d: version %s, want %s", name, i, a[2], version)
			}
			if want := strings.ToLower(hellos[i][1]); a[0] != want {
				t.Errorf("%s #%d: SSL::sessionid %q, the ServerHello carried %q", name, i, a[0], want)
			}
			if want := strings.ToLower(hellos[i][0]); a[1] != want {
				t.Errorf("%s #%d: SSL::sessionid desired %q, the ClientHello carried %q", name, i, a[1], want)
			}
		}
	}

	// TLS 1.3: the ServerHello echoes the client's 32-byte ID.
	hellos, answers := sClient(t, "127.0.146.10:443", req, "-tls1_3")
	check("TLS 1.3", hellos, answers, "TLSv1.3")
	if len(answers[0][0]) != 64 {
		t.Errorf("TLS 1.3: SSL::sessionid %q, want the 32-byte ID openssl offers", answers[0][0])
	}

	// TLS 1.2, a full handshake, then a resumption with the ticket: the
	// first has no session ID, the second the one the client sent with
	// its ticket, echoed.
	sess := filepath.Join(t.TempDir(), "sess.pem")
	hellos, answers = sClient(t, "127.0.146.10:443", req, "-tls1_2", "-sess_out", sess)
	check("TLS 1.2 full", hellos, answers, "TLSv1.2")
	if answers[0][0] != "" {
		t.Errorf("TLS 1.2 full handshake: SSL::sessionid %q, want none", answers[0][0])
	}
	if data, err := os.ReadFile(sess); err != nil || !bytes.Contains(data, []byte("BEGIN SSL SESSION PARAMETERS")) {
		t.Fatalf("openssl wrote no session: %v", err)
	}
	hellos, answers = sClient(t, "127.0.146.10:443", req, "-tls1_2", "-sess_in", sess)
	check("TLS 1.2 resumed", hellos, answers, "TLSv1.2")
	if len(answers[0][0]) != 64 {
		t.Errorf("TLS 1.2 resumption: SSL::sessionid %q, want the 32-byte ID sent with the ticket", answers[0][0])
	}
	// The same session offered where it cannot resume: a full handshake,
	// no session ID, and the one the client desired.
	hellos, answers = sClient(t, "127.0.146.20:443", req, "-tls1_2", "-sess_in", sess)
	check("TLS 1.2 not resumed", hellos, answers, "TLSv1.2")
	if answers[0][0] != "" || len(answers[0][1]) != 64 {
		t.Errorf("TLS 1.2 resumption refused: SSL::sessionid %q, desired %q; want none and the 32-byte ID offered", answers[0][0], answers[0][1])
	}
}
