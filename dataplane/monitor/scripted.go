package monitor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
)

// ScriptCheck is the scripted monitor's script: File names it in errors,
// Text is what the file held when the configuration was committed, so a
// commit is refused for a bad script rather than every probe failing.
type ScriptCheck struct {
	File, Text string
}

func (c *ScriptCheck) equal(o *ScriptCheck) bool {
	if c == nil || o == nil {
		return c == o
	}
	return *c == *o
}

func (c *ScriptCheck) check() error {
	if c == nil {
		return errors.New("a scripted monitor needs filename (the send/expect script to run)")
	}
	_, err := parseScript(c.File, c.Text)
	return err
}

// probeScripted runs the script over one TCP connection to the member,
// within the monitor's timeout: each send line writes its string, each
// expect line reads until its string has arrived (after what earlier
// expects matched). The script running to its end is up. Choices [M]:
// expect's string is matched as plain text, not a regular expression, and
// the script ends without awaiting anything after its last line.
func probeScripted(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	if spec.Script == nil {
		return Outcome{}, spec.Script.check()
	}
	steps, err := parseScript(spec.Script.File, spec.Script.Text)
	if err != nil {
		return Outcome{}, err
	}
	c, err := dial(ctx, target)
	if err != nil {
		return Outcome{}, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	var pending []byte // received and not yet matched by an expect
	chunk := make([]byte, 4096)
	for _, st := range steps {
		if st.send {
			if _, err := c.Write([]byte(st.text)); err != nil {
				return Outcome{}, fmt.Errorf("Unable to send (script line %d); %v", st.line, unwrapSyscall(err))
			}
			continue
		}
		for {
			if i := bytes.Index(pending, []byte(st.text)); i >= 0 {
				pending = pending[i+len(st.text):]
				break
			}
			if len(pending) >= maxReply {
				return Outcome{}, fmt.Errorf("%w (script line %d expects %q)", ErrNoMatch, st.line, st.text)
			}
			n, err := c.Read(chunk)
			pending = append(pending, chunk[:n]...)
			if err == nil || n > 0 && bytes.Contains(pending, []byte(st.text)) {
				continue
			}
			seen := ""
			if len(pending) > 0 {
				seen = fmt.Sprintf("; got %q", tail(pending, 80))
			}
			switch {
			case netTimeout(err) || ctx.Err() != nil:
				return Outcome{}, fmt.Errorf("%w (script line %d expects %q%s)", ErrNoResponse, st.line, st.text, seen)
			case len(pending) == 0:
				return Outcome{}, fmt.Errorf("Connection closed before %q (script line %d)", st.text, st.line)
			}
			return Outcome{}, fmt.Errorf("%w (script line %d expects %q%s)", ErrNoMatch, st.line, st.text, seen)
		}
	}
	return Outcome{Up: true}, nil
}

// tail is the last n bytes of b, which say best why an expect failed.
func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
