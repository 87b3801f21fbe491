package rules

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/openltm/openltm/rules/tcl"
)

// IStats is the store of the ISTATS:: commands: values made on the fly
// under keys of four words, "NAMESPACE NAME TYPE FIELD" (TYPE counter,
// gauge or string), shared by every rule of the process, as BIG-IP's
// iStats give the global view rather than one TMM's.
type IStats struct {
	mu sync.Mutex
	m  map[string]istat
}

type istat struct {
	str string
	n   int64
}

// NewIStats is an empty store.
func NewIStats() *IStats { return &IStats{m: map[string]istat{}} }

// istatKey checks a key and returns its type.
func istatKey(key string) (typ string, err error) {
	w := strings.Fields(key)
	if len(w) != 4 {
		return "", fmt.Errorf("key %q is not \"NAMESPACE NAME TYPE FIELD\"", key)
	}
	switch w[2] {
	case "counter", "gauge", "string":
		return w[2], nil
	}
	return "", fmt.Errorf("key %q: type %q is not counter, gauge or string", key, w[2])
}

func registerIStats(t *tcl.Commands) {
	t.Register("ISTATS::get", cmdIStats("ISTATS::get", 1))
	t.Register("ISTATS::set", cmdIStats("ISTATS::set", 2))
	t.Register("ISTATS::incr", cmdIStats("ISTATS::incr", 2))
	t.Register("ISTATS::remove", cmdIStats("ISTATS::remove", 1))
}

// cmdIStats is ISTATS::get KEY, ISTATS::set KEY VALUE, ISTATS::incr KEY
// VALUE (a counter only grows; a string is not incremented) and
// ISTATS::remove KEY. get answers a number key never set with 0 and a
// string one with "" [M].
func cmdIStats(name string, nargs int) tcl.CmdFunc {
	usage := name + " key"
	if nargs == 2 {
		usage += " value"
	}
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1+nargs {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		s := sessionOf(in)
		if s == nil || s.prog.env == nil || s.prog.env.IStats == nil {
			return tcl.Empty, tcl.Errorf("%s: no iStats store", name)
		}
		st := s.prog.env.IStats
		key := strings.Join(strings.Fields(args[1].String()), " ")
		typ, err := istatKey(key)
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", name, err)
		}
		var n int64
		if nargs == 2 && typ != "string" {
			if n, err = strconv.ParseInt(args[2].String(), 0, 64); err != nil {
				return tcl.Empty, tcl.Errorf("%s: %q is not a whole number", name, args[2].String())
			}
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		v := st.m[key]
		switch name {
		case "ISTATS::get":
			if typ == "string" {
				return tcl.Str(v.str), nil
			}
			return tcl.Int(v.n), nil
		case "ISTATS::remove":
			delete(st.m, key)
			return tcl.Empty, nil
		case "ISTATS::set":
			if typ == "string" {
				v.str = args[2].String()
			} else {
				v.n = n
			}
		case "ISTATS::incr":
			switch {
			case typ == "string":
				return tcl.Empty, tcl.Errorf("%s: a string iStat is not incremented", name)
			case typ == "counter" && n < 0:
				return tcl.Empty, tcl.Errorf("%s: a counter only grows (%d)", name, n)
			}
			v.n += n
		}
		if len(st.m) >= maxIStats {
			if _, ok := st.m[key]; !ok {
				return tcl.Empty, tcl.Errorf("%s: the store holds %d keys already", name, maxIStats)
			}
		}
		st.m[key] = v
		return tcl.Empty, nil
	}
}

// maxIStats bounds the keys a store holds (F5 gives a practical limit of
// 5,000 to 10,000); a rule making a key per client would otherwise grow
// it without end.
const maxIStats = 10000

// Number is the value of a counter or gauge key for readers outside the
// rules (iCall's iStats triggers poll it); ok is false for a key no rule
// has set, or one that is no counter or gauge.
func (s *IStats) Number(key string) (n int64, ok bool) {
	key = strings.Join(strings.Fields(key), " ")
	if typ, err := istatKey(key); err != nil || typ == "string" {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v.n, ok
}

// CheckNumberKey says whether key is one Number can read: four words
// whose third is counter or gauge; the error says what is wrong.
func CheckNumberKey(key string) error {
	typ, err := istatKey(strings.Join(strings.Fields(key), " "))
	if err != nil {
		return err
	}
	if typ == "string" {
		return fmt.Errorf("key %q is a string iStat; a range needs a counter or gauge", key)
	}
	return nil
}
