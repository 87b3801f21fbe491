package daemon

import (
	"bytes"
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSSLLogLevel: a client whose handshake fails (it offers only RC4,
// which the profile's ciphers leave out) has BIG-IP's 01260013 line in the ltm
// log at the default level, warning, and the reason too at debug; at
// error the line is not written.
func TestSSLLogLevel(t *testing.T) {
	s := tlsMembersFixture(t, "127.58.1")
	mustRun(t, s,
		"create ltm profile client-ssl cs cert-key-chain replace-all-with { app { cert app.crt key app.key } }",
		"create ltm pool p members add { 127.58.1.11:9000 }",
		"create ltm pool web members add { 127.58.1.12:8080 }",
		"create ltm virtual tls_vs destination 127.58.1.1:443 pool p profiles replace-all-with { tcp cs }",
		"create ltm virtual http_vs destination 127.58.1.2:443 pool web profiles replace-all-with { tcp http cs }",
	)
	if got, err := tlsAnswer("127.58.1.1:443", false); err != nil || got != "S1" {
		t.Fatalf("a good client: %q %v", got, err)
	}
	logFile := filepath.Join(s.e.opts.StateDir, LogFile)
	// fail makes one failed handshake from its own address, so that each
	// case's lines are told apart.
	fail := func(t *testing.T, from, vs string) {
		t.Helper()
		d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := tls.DialWithDialer(&d, "tcp", vs, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_RSA_WITH_RC4_128_SHA}})
		if err == nil {
			c.Close()
			t.Fatal("an RC4-only client's handshake succeeded")
		}
	}
	// waitLine waits (boundedly) for a line of the ltm log holding want.
	waitLine := func(t *testing.T, want string) string {
		t.Helper()
		var log string
		for i := 0; i < 100; i++ {
			s.e.logs.Sync()
			b, _ := os.ReadFile(logFile)
			if log = string(b); strings.Contains(log, want) {
				return log
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no %q in the ltm log:\n%s", want, log)
		return ""
	}
	for _, tc := range []struct {
		level, from, vs string
		warn, debug     bool // the 01260013 line, the 01260009 line
	}{
		{level: "", from: "127.58.1.101", vs: "127.58.1.1:443", warn: true},
		{level: "Debug", from: "127.58.1.102", vs: "127.58.1.1:443", warn: true, debug: true},
		{level: "error", from: "127.58.1.103", vs: "127.58.1.1:443"},
		{level: "warning", from: "127.58.1.104", vs: "127.58.1.2:443", warn: true},
		{level: "debug", from: "127.58.1.105", vs: "127.58.1.2:443", warn: true, debug: true},
		{level: "critical", from: "127.58.1.106", vs: "127.58.1.2:443"},
	} {
		name := tc.level
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			if tc.level != "" {
				mustRun(t, s, "modify sys db log.ssl.level value "+tc.level)
			}
			fail(t, tc.from, tc.vs)
			warn := "warning tmm[" // BIG-IP's severity word and tmm's tag
			failed := "]: 01260013:4: SSL Handshake failed for TCP " + tc.from + ":"
			reason := "]: 01260009:7: " + tc.from + ":"
			if !tc.warn {
				// Lines are written in order: one logged after this
				// failure shows this one's absence.
				mustRun(t, s, "modify sys db log.ssl.level reset-to-default")
				marker := strings.Replace(tc.from, ".1.", ".2.", 1) // its own, per case
				fail(t, marker, tc.vs)
				log := waitLine(t, "SSL Handshake failed for TCP "+marker+":")
				if strings.Contains(log, tc.from+":") {
					t.Fatalf("log.ssl.level %s: the failure was logged:\n%s", tc.level, log)
				}
				return
			}
			log := waitLine(t, failed)
			if !strings.Contains(log, warn) || !strings.Contains(log, " -> "+tc.vs+"\n") {
				t.Fatalf("the line is not BIG-IP's:\n%s", log)
			}
			if tc.debug {
				log = waitLine(t, reason)
				if !strings.Contains(log, "debug tmm[") || !strings.Contains(log, "Connection error: tls: no cipher suite supported by both client and server") {
					t.Fatalf("the reason's line:\n%s", log)
				}
			} else if strings.Contains(log, reason) {
				t.Fatalf("log.ssl.level %q: the debug line was written:\n%s", tc.level, log)
			}
		})
	}
}

// TestGTMLogLevel: the GTM logger keeps what log.gtm.level lets through,
// notice keeping ltmd's Info lines; a level set decides alone, so debug
// lines show though ltmd logs at info; unset, ltmd's level decides.
func TestGTMLogLevel(t *testing.T) {
	var buf bytes.Buffer
	e, err := Open(Options{StateDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.AddHook(&logLevelHook{e: e}); err != nil {
		t.Fatal(err)
	}
	s := e.NewSession("admin").(*Session)
	log := e.GTMLogger()
	for _, tc := range []struct {
		level string // "" leaves the key unset
		want  map[slog.Level]bool
	}{
		// Unset: ltmd's level (info here) decides.
		{"", map[slog.Level]bool{slog.LevelDebug: false, slog.LevelInfo: true, slog.LevelWarn: true}},
		{"Debug", map[slog.Level]bool{slog.LevelDebug: true, slog.LevelInfo: true}},
		{"informational", map[slog.Level]bool{slog.LevelDebug: false, slog.LevelInfo: true}},
		{"warning", map[slog.Level]bool{slog.LevelInfo: false, slog.LevelWarn: true, slog.LevelError: true}},
		{"error", map[slog.Level]bool{slog.LevelWarn: false, slog.LevelError: true}},
		{"critical", map[slog.Level]bool{slog.LevelError: false}},
		{"notice", map[slog.Level]bool{slog.LevelDebug: false, slog.LevelInfo: true}},
		{"reset", map[slog.Level]bool{slog.LevelDebug: false, slog.LevelInfo: true}},
	} {
		switch tc.level {
		case "":
		case "reset":
			mustRun(t, s, "modify sys db log.gtm.level reset-to-default")
		default:
			mustRun(t, s, "modify sys db log.gtm.level value "+tc.level)
		}
		for lv, want := range tc.want {
			buf.Reset()
			log.Log(context.Background(), lv, "gslb: a line")
			if got := strings.Contains(buf.String(), "gslb: a line"); got != want {
				t.Errorf("log.gtm.level %q: a %s line logged %v, want %v", tc.level, lv, got, want)
			}
		}
	}
}
