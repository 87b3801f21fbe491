package rules

import (
	"strings"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// session is BIG-IP 9's way of keeping a rule's own data beside the
// persistence records, still found in old rules:
//
//	session add MODE KEY DATA ?TIMEOUT?
//	session lookup MODE KEY
//	session delete MODE KEY
//
// MODE is simple, source_addr, sticky, dest_addr, ssl, uie, hash or sip;
// KEY is a value, or the list {VALUE any virtual|service|pool ?pool
// NAME?}. F5 documents that the data is stored "based on the same keys
// as persistence" and "does not affect the persistence itself": a
// `session add uie K D` does not send `persist uie K` anywhere, and a
// persistence record is not session data. So the records live in the
// session table the table command uses, under a subtable of their own
// per mode and virtual server that no rule can name, with the table's
// idle timeout (180 seconds by default, restarted by every add and
// lookup, as F5 says). Choices [M]: simple and sticky are source_addr's
// records, as for persist; a key with `any virtual` reaches one record
// shared by every virtual server, `any service` and `any pool` are the
// virtual server's own record (a virtual server has one service); a
// timeout of 0 or indefinite keeps the record until it is deleted.
// An empty lookup key is a Tcl error, as F5 warns it resets the
// connection.

const sessionUsage = "session add|lookup|delete MODE KEY ?DATA? ?TIMEOUT?"

// sessionSub is the subtable of mode's session records for virtual
// (empty: every virtual server's). The NUL keeps it apart from every
// subtable a rule's table command names.
func sessionSub(mode, virtual string) string {
	return "\x00session\x00" + mode + "\x00" + virtual
}

// sessionMode reads a session mode word into the records' mode.
func sessionMode(w string) (string, error) {
	switch w {
	case "simple", "sticky", "source_addr":
		return "source_addr", nil
	case "dest_addr", "ssl", "uie", "hash", "sip":
		return w, nil
	case "universal":
		return "uie", nil
	}
	return "", tcl.Errorf("bad session mode %q: must be simple, source_addr, sticky, dest_addr, ssl, uie, hash or sip", w)
}

func cmdSession(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, c, err := sess(in, "session")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) < 4 {
		return tcl.Empty, tcl.WrongArgs(sessionUsage)
	}
	op := args[1].String()
	mode, err := sessionMode(args[2].String())
	if err != nil {
		return tcl.Empty, err
	}
	var p Persist
	if err := persistKey(args[3], &p); err != nil {
		return tcl.Empty, tcl.Errorf("session: %s", strings.TrimPrefix(err.Error(), "bad persist "))
	}
	virtual := ""
	if li, ok := c.(LBInfo); ok && !p.AnyVirtual {
		virtual = li.VirtualName()
	}
	sub := sessionSub(mode, virtual)
	t := s.prog.env.Table
	rest := args[4:]
	switch op {
	case "add":
		if len(rest) < 1 || len(rest) > 2 {
			return tcl.Empty, tcl.WrongArgs("session add MODE KEY DATA ?TIMEOUT?")
		}
		timeout := DefaultTableTimeout
		if len(rest) == 2 {
			if timeout, err = parseTimeout(rest[1]); err != nil {
				return tcl.Empty, tcl.Errorf("session add: bad timeout %q: expected seconds", rest[1].String())
			}
		}
		t.put(sub, p.Key, rest[0].String(), timeout)
		return tcl.Empty, nil
	case "lookup":
		if len(rest) != 0 {
			return tcl.Empty, tcl.WrongArgs("session lookup MODE KEY")
		}
		if p.Key == "" {
			return tcl.Empty, tcl.Errorf("session lookup: the key is empty")
		}
		v, _ := t.touch(sub, p.Key)
		return tcl.Str(v), nil
	case "delete":
		if len(rest) != 0 {
			return tcl.Empty, tcl.WrongArgs("session delete MODE KEY")
		}
		t.remove(sub, p.Key)
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.Errorf("bad session subcommand %q: must be add, lookup or delete", op)
}

// put sets key in sub to val with an idle timeout (0: none).
func (t *Table) put(sub, key, val string, timeout time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.Now()
	e := t.get(sub, key, now)
	if e == nil {
		e = &tableEntry{created: now}
		t.sub(sub, true)[key] = e
	}
	e.val, e.timeout, e.lifetime, e.touched = val, timeout, 0, now
}

// touch looks key up in sub and restarts its idle timeout.
func (t *Table) touch(sub, key string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.Now()
	e := t.get(sub, key, now)
	if e == nil {
		return "", false
	}
	e.touched = now
	return e.val, true
}

// remove deletes key from sub.
func (t *Table) remove(sub, key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if m := t.sub(sub, false); m != nil {
		delete(m, key)
		if len(m) == 0 {
			delete(t.subs, sub)
		}
	}
}

func registerSession(t *tcl.Commands) {
	t.Register("session", cmdSession)
}
