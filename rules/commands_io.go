package rules

import (
	"net/netip"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// IFile is one `ltm ifile` as rules see it: the name rules use and the
// content and attributes of the `sys file ifile` it names. The daemon
// makes one per commit; the content's Tcl value is made once, so `ifile
// get` in a maintenance page rule costs nothing per request.
type IFile struct {
	// Name is the ltm ifile's full name (/Common/maint.html).
	Name string
	// FileName is the sys file ifile holding the content.
	FileName string
	// Checksum is F5's form, SHA1:size:hex.
	Checksum       string
	Revision       int64
	Size           int64
	CreatedBy      string
	LastUpdatedBy  string
	CreateTime     time.Time
	LastUpdateTime time.Time
	content        tcl.Value
}

// NewIFile makes an iFile holding content (kept as Tcl holds bytes: one
// character per byte, so binary files such as images pass unchanged).
func NewIFile(name, fileName string, content []byte) *IFile {
	return &IFile{Name: name, FileName: fileName, Size: int64(len(content)), content: forceString(tcl.Bytes(content))}
}

// Content is the file's bytes.
func (f *IFile) Content() []byte { return tcl.BytesOf(f.content) }

// HSL is the sending side of high-speed logging: one sender per pool and
// protocol, balancing over the pool's available members. Send must not
// block the connection running the rule: a message that cannot be queued
// is dropped (and counted by the implementation).
type HSL interface {
	// Open returns the handle rules pass to HSL::send; proto is UDP or TCP,
	// pool a pool name as the rule wrote it.
	Open(proto, pool string) (string, error)
	// Send queues data for the handle's pool: false when it was dropped
	// (the queue is full). An error is a Tcl error (a handle HSL::open did
	// not make).
	Send(handle string, data []byte) (bool, error)
}

// HSLPublishers is an HSL that also opens log publishers (HSL::open
// -publisher); its handles go to the same Send.
type HSLPublishers interface {
	HSL
	// OpenPublisher returns the handle of a sys log-config publisher, by
	// the name the rule wrote (bare names are in /Common).
	OpenPublisher(name string) (string, error)
}

// registerIO adds the commands that read files and send logs away from
// the connection: ifile, HSL::open, HSL::send.
func registerIO(t *tcl.Commands) {
	t.Register("ifile", cmdIfile)
	t.Register("HSL::open", cmdHSLOpen).Compile = hslOpenHook
	t.Register("HSL::send", cmdHSLSend)
}

// tmshTime is how tmsh prints a file's times (2024-05-14:13:23:40).
const tmshTime = "2006-01-02:15:04:05"

func cmdIfile(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "ifile get|attributes|checksum|last_updated_by|last_update_time|revision IFILE, or ifile listall"
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	s := sessionOf(in)
	var env *Env
	if s != nil {
		env = s.prog.env
	}
	sub := args[1].String()
	if sub == "listall" {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs("ifile listall")
		}
		var names []tcl.Value
		if env != nil && env.IFiles != nil {
			for _, n := range env.IFiles() {
				names = append(names, tcl.Str(n))
			}
		}
		return tcl.List(names...), nil
	}
	if len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	switch sub {
	case "get", "attributes", "checksum", "last_updated_by", "last_update_time", "revision":
	default:
		return tcl.Empty, tcl.Errorf("bad option %q: must be attributes, checksum, get, last_update_time, last_updated_by, listall or revision", sub)
	}
	name := args[2].String()
	var f *IFile
	ok := false
	if env != nil && env.IFile != nil {
		f, ok = env.IFile(name)
	}
	if !ok {
		return tcl.Empty, tcl.Errorf("ifile %s: no such ltm ifile (create ltm ifile NAME file-name SYS-FILE-IFILE)", name)
	}
	switch sub {
	case "get":
		return f.content, nil
	case "checksum":
		return tcl.Str(f.Checksum), nil
	case "last_updated_by":
		return tcl.Str(f.LastUpdatedBy), nil
	case "last_update_time":
		return tcl.Str(f.LastUpdateTime.UTC().Format(tmshTime)), nil
	case "revision":
		return tcl.Int(f.Revision), nil
	}
	return tcl.List(
		tcl.Str("name"), tcl.Str(f.Name),
		tcl.Str("file-name"), tcl.Str(f.FileName),
		tcl.Str("checksum"), tcl.Str(f.Checksum),
		tcl.Str("size"), tcl.Int(f.Size),
		tcl.Str("revision"), tcl.Int(f.Revision),
		tcl.Str("created-by"), tcl.Str(f.CreatedBy),
		tcl.Str("create-time"), tcl.Str(f.CreateTime.UTC().Format(tmshTime)),
		tcl.Str("last-updated-by"), tcl.Str(f.LastUpdatedBy),
		tcl.Str("last-update-time"), tcl.Str(f.LastUpdateTime.UTC().Format(tmshTime)),
	), nil
}

// hslOpenHook refuses a literal protocol other than UDP or TCP (BIG-IP
// checks it, case and all, when the rule is saved; the pool or publisher
// name it checks only when the rule runs).
func hslOpenHook(c *tcl.Compiler) error {
	for i := 1; i < c.NumWords(); i++ {
		w, lit := c.Literal(i)
		if !lit {
			continue
		}
		switch w {
		case "-proto":
			if p, lit := c.Literal(i + 1); lit && i+1 < c.NumWords() && p != "UDP" && p != "TCP" {
				return c.Errorf(i+1, "HSL::open: bad protocol %q: must be UDP or TCP (in capitals)", p)
			}
		}
	}
	return nil
}

func cmdHSLOpen(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "HSL::open -proto UDP|TCP -pool POOL | -publisher PUBLISHER"
	proto, pool, pub := "UDP", "", ""
	for i := 1; i < len(args); i += 2 {
		if i+1 >= len(args) {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		v := args[i+1].String()
		switch args[i].String() {
		case "-proto":
			if v != "UDP" && v != "TCP" {
				return tcl.Empty, tcl.Errorf("HSL::open: bad protocol %q: must be UDP or TCP (in capitals)", v)
			}
			proto = v
		case "-pool":
			pool = v
		case "-publisher", "-pub":
			pub = v
		default:
			return tcl.Empty, tcl.Errorf("HSL::open: bad option %q: must be -proto, -pool or -publisher", args[i].String())
		}
	}
	if (pool == "") == (pub == "") {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	s := sessionOf(in)
	if s == nil || s.prog.env.HSL == nil {
		return tcl.Empty, tcl.Errorf("HSL::open: high-speed logging is not available here")
	}
	if pub != "" {
		hp, ok := s.prog.env.HSL.(HSLPublishers)
		if !ok {
			return tcl.Empty, tcl.Errorf("HSL::open -publisher: log publishers are not available here")
		}
		h, err := hp.OpenPublisher(pub)
		if err != nil {
			return tcl.Empty, tclErr(err)
		}
		return tcl.Str(h), nil
	}
	h, err := s.prog.env.HSL.Open(proto, pool)
	if err != nil {
		return tcl.Empty, tclErr(err)
	}
	return tcl.Str(h), nil
}

func cmdHSLSend(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs("HSL::send handle data")
	}
	s := sessionOf(in)
	if s == nil || s.prog.env.HSL == nil {
		return tcl.Empty, tcl.Errorf("HSL::send: high-speed logging is not available here")
	}
	sent, err := s.prog.env.HSL.Send(args[1].String(), tcl.BytesOf(args[2]))
	if err != nil {
		return tcl.Empty, tclErr(err)
	}
	// 1 when the message is on its way, 0 when it was dropped.
	return tcl.Bool(sent), nil
}

// parseLogTarget reads log's optional remote destination (addr or
// addr:port, port 514 when absent), as `log 192.0.2.9:5514 local0. "text"`
// writes it.
func parseLogTarget(s string) (netip.AddrPort, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap, true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.AddrPortFrom(a, 514), true
	}
	return netip.AddrPort{}, false
}
