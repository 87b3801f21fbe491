// Package transcripts replays whole procedures, command by command, against
// real programs: an ltmd started in the script's work directory, tmsh
// talking to it over its socket, and tcpkit peers carrying real traffic.
package transcripts

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the golden output inside the transcripts")

// binDir holds tmsh, ltmd and tcpkit built once for all transcripts.
var binDir string

func TestMain(m *testing.M) {
	flag.Parse()
	// A transcript spends most of its time waiting (for ltmd to start,
	// for a poll to match, for a timeout to pass): alone, four at a time
	// on two processors took 169 s and 1.1 processors' worth of CPU. So
	// unless -parallel is given, twice as many run at once as there are
	// processors, instead of go test's one per processor.
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
	dir, err := os.MkdirTemp("", "openltm-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	cmd := exec.Command("go", "build", "-o", dir, "../cmd/tmsh", "../cmd/ltmd", "../cmd/tcpkit")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the programs for the transcripts:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// A background command (exec ... &name&) is waited for at the end of its
// script until every process holding its standard output or error has
// closed them, not only until it exits: a socat whose SYSTEM: child
// sleeps 60 s kept gtm_listener_conn running a minute after its last
// step. So a background socat that forks long-lived children sends their
// standard error to /dev/null (sh -c 'exec socat ... 2>/dev/null'), and a
// silent UDP peer is one process (socat -u UDP4-RECV:... OPEN:/dev/null).
func TestTranscripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Condition:           condition,
		Setup: func(e *testscript.Env) error {
			e.Setenv("PATH", binDir+string(os.PathListSeparator)+e.Getenv("PATH"))
			e.Setenv("OPENLTM_STATE_DIR", filepath.Join(e.WorkDir, "state"))
			e.Setenv("OPENLTM_SOCKET", filepath.Join(e.WorkDir, "ltmd.sock"))
			e.Setenv("HOME", e.WorkDir)
			setupEtcd(e) // cluster_cmds_test.go
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitsock": cmdWaitSock,
			"waitport": cmdWaitPort,
			"waitudp":  cmdWaitUDP, // waitudp_test.go
			"poll":     cmdPoll,
			"send":     cmdSend,
			"sleep":    cmdSleep,
			"capture":  cmdCapture,
			// Device groups (cluster_cmds_test.go).
			"etcd":        cmdEtcd,
			"trustdomain": cmdTrustDomain,
			"freeport":    cmdFreePort,
			// A PCP client (pcp_cmds_test.go).
			"pcpclient": cmdPCPClient,
			// reset-on-timeout as a client sees it (tcpopts_test.go).
			"idleclose": cmdIdleClose,
			// The close handling as clients and members see it (tcpclose_test.go).
			"holdmember": cmdHoldMember, "memberends": cmdMemberEnds, "halfclose": cmdHalfClose,
			// Multipath TCP and pacing as a client sees them (tcppace_test.go).
			"sockinfo": cmdSockInfo, "httphalfclose": cmdHTTPHalfClose,
			// An HTTP/2 client that stops reading (tcph2_test.go).
			"h2stall": cmdH2Stall,
			// A geolocation database (geoip_cmds_test.go).
			"mmdb": cmdMMDB,
			// An OCSP responder (ocsp_cmds_test.go).
			"ocspd": cmdOCSPd,
			// An MQTT broker as a member (mqtt_cmds_test.go).
			"mqttbroker": cmdMQTTBroker,
			// A FIX acceptor as a member and a FIX session (fix_cmds_test.go).
			"fixacceptor": cmdFIXAcceptor, "fixseen": cmdFIXSeen, "fixsession": cmdFIXSession,
			// An LDAP directory as a member (ldap_cmds_test.go).
			"ldapserver": cmdLDAPServer, "ldapseen": cmdLDAPSeen,
			// A go-ldap client's simple bind (asn1_cmds_test.go).
			"ldapbind": cmdLDAPBind,
			// HTTP members that count connections and authenticate them
			// with NTLM, and an NTLM client (fasthttp_cmds_test.go).
			"httpmember": cmdHTTPMember, "ntlmclient": cmdNTLMClient,
			// A Diameter peer as a member and a Diameter client (diameter_cmds_test.go).
			"diamserver": cmdDiamServer, "diamseen": cmdDiamSeen, "diamclient": cmdDiamClient,
			// An LDAP directory (slapd), a RADIUS and a TACACS+ server
			// the auth profiles ask (auth_cmds_test.go).
			"slapd": cmdSlapd, "radiusd": cmdRadiusd, "tacacsd": cmdTacacsd, "tacacslog": cmdTacacslog,
			// A Diameter peer that connects to a virtual and answers
			// what it routes to it, and a peer's DPR
			// (diameter_dynamic_cmds_test.go).
			"diampeer": cmdDiamPeer, "diamdpr": cmdDiamDPR,
			// Idle clients held open, and asked later (evict_cmds_test.go).
			"holdconn": cmdHoldConn, "holdask": cmdHoldAsk,
		},
	})
}

// capture NAME REGEXP: set the variable NAME to the first group of REGEXP
// in the last command's standard output (a value the next commands need,
// such as a device's certificate fingerprint).
func cmdCapture(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: capture NAME REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	m := re.FindStringSubmatch(ts.ReadFile("stdout"))
	if len(m) < 2 {
		ts.Fatalf("capture %s: no match for %q in stdout", args[0], args[1])
	}
	ts.Setenv(args[0], m[1])
}

// waitsock PATH: wait (up to 10 s) until a daemon listens on the socket.
func cmdWaitSock(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: waitsock PATH")
	}
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("no daemon answered on %s within 10s", path)
}

// waitport ADDR: wait (up to 10 s) until something accepts TCP on ADDR.
func cmdWaitPort(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: waitport ADDR")
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", args[0], time.Second)
		if err == nil {
			c.Close()
			if neg {
				ts.Fatalf("%s accepts connections", args[0])
			}
			return
		}
		if neg {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("nothing listens on %s within 10s", args[0])
}

// poll SECONDS REGEXP PROG ARGS...: run the program until its standard
// output matches (at most every 100 ms, for at most SECONDS); the last
// output becomes the script's stdout. For conditions that take a moment,
// like a monitor marking a member down.
func cmdPoll(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 3 {
		ts.Fatalf("usage: poll SECONDS REGEXP PROG ARGS...")
	}
	secs, err := strconv.ParseFloat(args[0], 64)
	ts.Check(err)
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	deadline := time.Now().Add(time.Duration(secs * float64(time.Second)))
	prog := lookPath(ts, args[2])
	var out []byte
	var runErr error
	for i := 0; i < 10000; i++ {
		cmd := exec.Command(prog, args[3:]...)
		cmd.Dir = ts.Getenv("WORK")
		cmd.Env = envOf(ts)
		out, runErr = cmd.Output()
		if re.Match(out) != neg {
			fmt.Fprint(ts.Stdout(), string(out))
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	ts.Fatalf("after %vs, %s output still does not match %q (last run: %v):\n%s", secs, args[2], args[1], runErr, out)
}

// lookPath finds a program on the script's PATH (not the test process's).
func lookPath(ts *testscript.TestScript, prog string) string {
	if strings.ContainsRune(prog, '/') {
		return prog
	}
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return prog
}

func envOf(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "OPENLTM_STATE_DIR", "OPENLTM_SOCKET", "WORK", "TMPDIR"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	return env
}

// send ADDR MESSAGE...: connect to ADDR, send each message as a line, and
// print each answer line; a reset or silence (3 s) is printed as such.
func cmdSend(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: send ADDR MESSAGE...")
	}
	c, err := net.DialTimeout("tcp", args[0], 3*time.Second)
	if err != nil {
		if neg {
			fmt.Fprintf(ts.Stdout(), "connect: refused\n")
			return
		}
		ts.Fatalf("connect %s: %v", args[0], err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for _, m := range args[1:] {
		c.SetDeadline(time.Now().Add(3 * time.Second))
		if _, err := fmt.Fprintf(c, "%s\n", m); err != nil {
			fmt.Fprintf(ts.Stdout(), "send: %s\n", errWord(err))
			if !neg {
				ts.Fatalf("send to %s: %v", args[0], err)
			}
			return
		}
		line, err := r.ReadString('\n')
		if err != nil {
			fmt.Fprintf(ts.Stdout(), "recv: %s\n", errWord(err))
			if !neg {
				ts.Fatalf("no answer from %s: %v", args[0], err)
			}
			return
		}
		fmt.Fprint(ts.Stdout(), line)
	}
	if neg {
		ts.Fatalf("every message to %s was answered", args[0])
	}
}

func errWord(err error) string {
	s := err.Error()
	switch {
	case strings.Contains(s, "reset"), strings.Contains(s, "broken pipe"):
		// A write after the peer's reset fails with EPIPE once the
		// reset has been reported.
		return "reset"
	case strings.Contains(s, "EOF"):
		return "closed"
	case strings.Contains(s, "timeout"):
		return "timeout"
	}
	return s
}

// sleep SECONDS: for the few steps that must let time pass (idle timeouts).
func cmdSleep(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: sleep SECONDS")
	}
	secs, err := strconv.ParseFloat(args[0], 64)
	ts.Check(err)
	if secs > 30 {
		ts.Fatalf("sleep: at most 30 seconds")
	}
	time.Sleep(time.Duration(secs * float64(time.Second)))
}

// condition answers the scripts' own conditions: [pymod:NAME] holds when
// Debian's python3 (/usr/bin/python3, the one .ci/run installs modules
// for) imports NAME, so a transcript that runs a Python server skips,
// saying which, where the module is missing; [mptcp] holds when the
// kernel makes Multipath TCP connections on loopback.
func condition(cond string) (bool, error) {
	if cond == "mptcp" {
		return mptcpWorks(), nil // tcppace_test.go
	}
	if cond == "anyport" {
		return dataplane.AnyPortSupport() == nil, nil // a virtual on every port (anyport.txtar)
	}
	name, ok := strings.CutPrefix(cond, "pymod:")
	if !ok {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	return exec.Command("/usr/bin/python3", "-c", "import "+name).Run() == nil, nil
}
