package rules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// iRules LX: a rule's calls into the Node.js extensions of an ilx plugin
// (`set h [ILX::init PLUGIN EXTENSION]; ILX::call $h ?-timeout MS?
// METHOD ?ARG ...?`, `ILX::notify $h METHOD ?ARG ...?`).
//
// ILX::call waits for the extension's answer as BIG-IP suspends the rule:
// a rule using it is one that waits (waitHook), so its connections are
// kept off the event loops and the call waits on the connection's own
// goroutine, its -timeout (BIG-IP's default, 3000 ms) moving the event's
// deadline. ILX::notify does not wait.

// ILX is what the daemon gives rules to reach the running ilx plugins.
// plugin is a full path (/Common/NAME).
type ILX interface {
	// Init checks that the plugin runs the extension (ILX::init).
	Init(plugin, ext string) error
	// Call asks the extension's method and returns the JSON value it
	// replied with, waiting no longer than ctx allows.
	Call(ctx context.Context, plugin, ext, method string, args []string) (json.RawMessage, error)
	// Notify sends the method its arguments without waiting.
	Notify(plugin, ext, method string, args []string) error
}

// ilxCallWait is ILX::call's default -timeout, BIG-IP's.
const ilxCallWait = 3000 * time.Millisecond

func registerILX(t *tcl.Commands) {
	t.Register("ILX::init", cmdILXInit)
	t.Register("ILX::call", cmdILXCall).Compile = waitHook
	t.Register("ILX::notify", cmdILXNotify)
}

// ilxOf is the Env's ILX, or the Tcl error of a command without one.
func ilxOf(in *tcl.Interp, cmd string) (ILX, error) {
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	if s.prog == nil || s.prog.env == nil || s.prog.env.ILX == nil {
		return nil, tcl.Errorf("%s: iRules LX is not available here (no ilx plugins run)", cmd)
	}
	return s.prog.env.ILX, nil
}

// ilxHandle is the handle ILX::init returns: the plugin's full path and
// the extension, joined by a slash [M: BIG-IP's handle is opaque].
func ilxHandle(plugin, ext string) string { return plugin + "/" + ext }

// parseILXHandle splits a handle into its plugin and extension.
func parseILXHandle(cmd, h string) (plugin, ext string, err error) {
	i := strings.LastIndexByte(h, '/')
	if i <= 0 || i == len(h)-1 || !strings.HasPrefix(h, "/") {
		return "", "", tcl.Errorf("%s: %q is not an ILX handle (ILX::init PLUGIN EXTENSION makes one)", cmd, h)
	}
	return h[:i], h[i+1:], nil
}

// ilxPlugin is a plugin's full path as a rule names it: a bare name is
// in /Common.
func ilxPlugin(name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return "/Common/" + name
}

// cmdILXInit is `ILX::init PLUGIN EXTENSION`: a handle on the running
// extension; an unknown plugin or extension, or a disabled plugin, is a
// Tcl error.
func cmdILXInit(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs("ILX::init plugin_name extension_name")
	}
	x, err := ilxOf(in, "ILX::init")
	if err != nil {
		return tcl.Empty, err
	}
	plugin, ext := ilxPlugin(args[1].String()), args[2].String()
	if err := x.Init(plugin, ext); err != nil {
		return tcl.Empty, tcl.Errorf("%v", err)
	}
	return tcl.Str(ilxHandle(plugin, ext)), nil
}

// cmdILXCall is `ILX::call HANDLE ?-timeout MS? METHOD ?ARG ...?`: the
// method's reply, a string, or a Tcl list for an array or an object
// (key value ...). A reply that does not come within -timeout is the Tcl
// error "ILX timeout."; an error the extension replies with (or throws)
// is a Tcl error with its text; both can be caught.
func cmdILXCall(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const use = "ILX::call handle ?-timeout ms? method ?arg ...?"
	if len(args) < 3 {
		return tcl.Empty, tcl.WrongArgs(use)
	}
	plugin, ext, err := parseILXHandle("ILX::call", args[1].String())
	if err != nil {
		return tcl.Empty, err
	}
	rest := args[2:]
	timeout := ilxCallWait
	if rest[0].String() == "-timeout" {
		if len(rest) < 3 {
			return tcl.Empty, tcl.WrongArgs(use)
		}
		ms, err := strconv.ParseInt(rest[1].String(), 10, 64)
		if err != nil || ms < 0 {
			return tcl.Empty, tcl.Errorf("ILX::call: -timeout expects milliseconds, a whole number of 0 or more, not %q", rest[1].String())
		}
		timeout, rest = time.Duration(ms)*time.Millisecond, rest[2:]
	}
	x, err := ilxOf(in, "ILX::call")
	if err != nil {
		return tcl.Empty, err
	}
	wait := waitFor(in, timeout)
	if wait <= 0 {
		return tcl.Empty, tcl.Errorf("ILX timeout.")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	start := time.Now()
	res, err := x.Call(ctx, plugin, ext, rest[0].String(), ilxArgs(rest[1:]))
	waited(in, start)
	if err != nil {
		return tcl.Empty, tcl.Errorf("%v", err)
	}
	v, err := ilxValue(res)
	if err != nil {
		return tcl.Empty, tcl.Errorf("ILX::call: the extension's reply does not read: %v", err)
	}
	return v, nil
}

// cmdILXNotify is `ILX::notify HANDLE METHOD ?ARG ...?`: the method is
// sent its arguments and the rule goes on at once.
func cmdILXNotify(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 3 {
		return tcl.Empty, tcl.WrongArgs("ILX::notify handle method ?arg ...?")
	}
	plugin, ext, err := parseILXHandle("ILX::notify", args[1].String())
	if err != nil {
		return tcl.Empty, err
	}
	x, err := ilxOf(in, "ILX::notify")
	if err != nil {
		return tcl.Empty, err
	}
	if err := x.Notify(plugin, ext, args[2].String(), ilxArgs(args[3:])); err != nil {
		return tcl.Empty, tcl.Errorf("%v", err)
	}
	return tcl.Empty, nil
}

// ilxArgs are the arguments as the extension's req.params() gets them:
// each word a string [M: a Tcl list stays its string form].
func ilxArgs(vs []tcl.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}

// ilxValue turns a reply into Tcl: a string as it is, a number as
// JavaScript writes it, true and false as words, null as an empty
// string, an array as a list and an object as a list of keys and values
// in the order the extension wrote them, nested as deep as they go.
func ilxValue(raw json.RawMessage) (tcl.Value, error) {
	if len(raw) == 0 {
		return tcl.Empty, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := ilxDecode(dec, 0)
	if err != nil {
		return tcl.Empty, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return tcl.Empty, errors.New("more than one value")
	}
	return v, nil
}

func ilxDecode(dec *json.Decoder, depth int) (tcl.Value, error) {
	if depth > jsonMaxDepth {
		return tcl.Empty, errors.New("nested too deep")
	}
	tok, err := dec.Token()
	if err != nil {
		return tcl.Empty, err
	}
	switch t := tok.(type) {
	case json.Delim:
		var items []tcl.Value
		switch t {
		case '[':
			for dec.More() {
				v, err := ilxDecode(dec, depth+1)
				if err != nil {
					return tcl.Empty, err
				}
				items = append(items, v)
			}
		case '{':
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return tcl.Empty, err
				}
				v, err := ilxDecode(dec, depth+1)
				if err != nil {
					return tcl.Empty, err
				}
				items = append(items, tcl.Str(k.(string)), v)
			}
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return tcl.Empty, err
		}
		return tcl.List(items...), nil
	case string:
		return tcl.Str(t), nil
	case json.Number:
		return tcl.Str(t.String()), nil
	case bool:
		return tcl.Str(strconv.FormatBool(t)), nil
	case nil:
		return tcl.Empty, nil
	}
	return tcl.Empty, errors.New("unexpected token")
}
