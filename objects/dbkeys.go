package objects

// actedDBKeys are the sys db keys openltm acts on; every other key of the
// kind is kept and saved back only.
var actedDBKeys = map[string]bool{
	"tm.rstcause.log": true, // the reset-cause log lines (daemon/rstcause.go)
}

// dbDefaults are BIG-IP's values of the db keys openltm knows, which an
// unset key lists (`list sys db tm.rstcause.log` shows value "disable");
// other keys list as { } until set [M: openltm does not carry BIG-IP's
// whole db].
var dbDefaults = map[string]string{
	"tm.rstcause.log": "disable",
}

// ActsOnObject reports whether openltm acts on the object name of kind k:
// a kind that is not passive, or one of the sys db keys that act, so that
// tmsh does not warn that the key is only kept.
func (k *Kind) ActsOnObject(name string) bool {
	if !k.Passive {
		return true
	}
	return k.Key() == "sys db" && actedDBKeys[name]
}
