package monitor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ExternalRun is an external monitor's program and what it is given.
type ExternalRun struct {
	// Path is the executable (the sys file external-monitor's file).
	Path string
	// RunName is the `run` object's name (RUN_I); "" uses Path.
	RunName string
	// Args is the `args` string, split into words as a shell would
	// (quotes group, no expansion).
	Args string
	// Env holds the `user-defined` variables.
	Env map[string]string
}

func (e *ExternalRun) equal(o *ExternalRun) bool {
	if e == nil || o == nil {
		return e == o
	}
	return e.Path == o.Path && e.RunName == o.RunName && e.Args == o.Args && maps.Equal(e.Env, o.Env)
}

// externalPath is the PATH an external monitor runs with.
const externalPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// F5Address is the address as BIG-IP hands it to external monitors: IPv4
// written IPv6-mapped (::ffff:10.1.1.1), IPv6 as is.
func F5Address(a netip.Addr) string {
	a = a.Unmap()
	if a.Is4() {
		return "::ffff:" + a.String()
	}
	return a.String()
}

func probeExternal(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	x := spec.External
	if x == nil || x.Path == "" {
		return Outcome{}, errors.New("external monitor without run")
	}
	args, err := splitArgs(x.Args)
	if err != nil {
		return Outcome{}, fmt.Errorf("args: %v", err)
	}
	ip, port := F5Address(target.Addr()), strconv.Itoa(int(target.Port()))
	cmd := exec.Command(x.Path, append([]string{ip, port}, args...)...)
	run := x.RunName
	if run == "" {
		run = x.Path
	}
	env := []string{"PATH=" + externalPath, "MON_TMPL_NAME=" + spec.Name, "RUN_I=" + run, "NODE_IP=" + ip, "NODE_PORT=" + port}
	for _, k := range slices.Sorted(maps.Keys(x.Env)) {
		env = append(env, k+"="+x.Env[k])
	}
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &limitWriter{w: &out, n: maxReply}
	setGroup(cmd)
	// A background child may hold stdout after the program exits: the
	// verdict does not wait for it longer than this.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return Outcome{}, fmt.Errorf("Unable to run %s; %v", x.Path, unwrapPath(err))
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-ctx.Done():
		killGroup(cmd)
		select {
		case <-done:
		case <-time.After(2 * time.Second): // a grandchild holding stdout
		}
		return Outcome{}, ErrNoResponse
	}
	if out.Len() == 0 {
		return Outcome{}, errors.New("external monitor printed nothing")
	}
	return Outcome{Up: true}, nil
}

type limitWriter struct {
	w *bytes.Buffer
	n int
}

// Write keeps the first n bytes and drops the rest, so a chatty program
// cannot grow the monitor's memory.
func (l *limitWriter) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func unwrapPath(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return unwrapSyscall(err)
}

// splitArgs splits an args string into words: blanks separate, single and
// double quotes group, a backslash escapes the next character.
func splitArgs(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			} else if ch == '\\' && quote == '"' && i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			} else {
				cur.WriteByte(ch)
			}
		case ch == '\'' || ch == '"':
			quote, inWord = ch, true
		case ch == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case ch == ' ' || ch == '\t' || ch == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}
