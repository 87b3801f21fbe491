package objects

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// DBKey is one BIG-IP db variable openltm knows: the value BIG-IP has
// before anyone sets it, and the values it takes, so that `list sys db`
// shows what a BIG-IP shows and `modify sys db` refuses what it refuses.
type DBKey struct {
	Name    string
	Default string
	// Values are the words the key takes (enable disable, true false);
	// none for a number or a free text.
	Values []string
	// Fold compares Values without case (log levels: Debug and debug).
	Fold bool
	// Number keys take a decimal integer from Min to Max.
	Number   bool
	Min, Max int64
	// Acted keys change what openltm does; the others are kept and
	// saved back only.
	Acted bool
	// Note says why a kept key has no effect here, for the warning.
	Note string
}

// Sources of the table, cited per row: [K] the F5 BIG-IP 301b study
// guide (tm.maxrejectrate's "Limiting closed port RST response from 299
// to 250 packets/sec", tm.rejectunmatched false drops silently); [R] the
// tm:sys:db REST fixtures of F5's own projects (f5-declarative-onboarding,
// f5-telemetry-streaming, f5-ansible tests: defaultValue and valueRange);
// [S] tmsh lines of published onboarding scripts and F5 lab guides
// (which values they set, and which they mark "#Default"). A default or
// range no source gives is [M].
var dbKeys = []DBKey{
	// Reset causes [K]; default disable.
	{Name: "tm.rstcause.log", Default: "disable", Values: onOff, Acted: true},
	{Name: "tm.rstcause.pkt", Default: "disable", Values: onOff, Note: "a reset sent through a Linux socket carries no payload"},
	// Resets for refused packets [K]: 250 a second; range [M].
	{Name: "tm.maxrejectrate", Default: "250", Number: true, Min: 0, Max: 4294967295, Acted: true},
	// [K] false drops unmatched packets silently; default true.
	{Name: "tm.rejectunmatched", Default: "true", Values: trueFalse, Note: "a connection to an address and port no virtual server listens on is answered by the Linux kernel (a reset on loopback), not by openltm"},
	// Packet filtering: iControl's Networking.PacketFilterGlobals
	// (filtering disabled, established connections not filtered and
	// unhandled packets accepted by default); the key names and words [M].
	{Name: "packetfilter", Default: "disable", Values: onOff, Acted: true},
	{Name: "packetfilter.defaultaction", Default: "accept", Values: []string{"accept", "discard", "reject"}, Acted: true},
	{Name: "packetfilter.established", Default: "disable", Values: onOff, Acted: true}, // enable: open connections and flows matched again when the filters change (daemon/packetfilter.go)
	// [S] set to disable for offload testing; default [M].
	{Name: "tm.tcpsegmentationoffload", Default: "enable", Values: onOff, Note: "segmentation offload is the Linux kernel's and the NIC's"},
	{Name: "tm.tcpprogressive.autobuffertuning", Default: "enable", Values: onOff, Note: "socket buffers are the Linux kernel's (tcp profile send-buffer-size and receive-window-size set them)"},
	{Name: "tm.minipfragsize", Default: "576", Number: true, Min: 0, Max: 65535, Note: "fragmentation is the Linux kernel's"},
	// [S] "vlan-keyed-conn enabled #Default"; scripts set disable.
	{Name: "connection.vlankeyed", Default: "enable", Values: onOff, Note: "openltm has no VLANs"},
	{Name: "connection.syncookies.threshold", Default: "64000", Number: true, Min: 0, Max: 4294967295, Note: "SYN cookies are the Linux kernel's (net.ipv4.tcp_syncookies)"},
	// [S] Azure and AWS guides set enable; default [M].
	{Name: "config.allow.rfc3927", Default: "disable", Values: onOff, Note: "openltm's self IPs are the host's addresses"},
	{Name: "ipsec.if.checkpolicy", Default: "enable", Values: onOff, Note: "openltm has no IPsec"},
	// [S] ServiceNow and Cisco NSO guides set false for numeric ports;
	// true prints :http.
	{Name: "bigpipe.displayservicenames", Default: "true", Values: trueFalse, Acted: true},
	// [S] onboarding scripts; defaults [M].
	{Name: "statemirror.clustermirroring", Default: "within", Values: []string{"within", "between"}, Note: "openltm mirrors to the device group's peers (cm device mirror-ip)"},
	{Name: "failover.selinuxallowscripts", Default: "disable", Values: onOff, Note: "openltm runs no failover scripts"},
	{Name: "setup.run", Default: "true", Values: trueFalse, Note: "openltm has no setup utility"},
	// [R] valueRange "false true", defaultValue "false".
	{Name: "systemauth.disablebash", Default: "false", Values: trueFalse, Note: "openltm has no login shell of its own"},
	{Name: "systemauth.disablerootlogin", Default: "false", Values: trueFalse, Note: "openltm has no login shell of its own"},
	// [R] valueRange "integer min:0 max:100", defaultValue "0".
	{Name: "provision.cpu.afm", Default: "0", Number: true, Min: 0, Max: 100, Note: "openltm has no AFM"},
	// [S] setdb provision.extramb 500 and restjavad.useextramb true;
	// range [M].
	{Name: "provision.extramb", Default: "0", Number: true, Min: 0, Max: 8192, Note: "openltm reserves no memory for a management plane"},
	{Name: "restjavad.useextramb", Default: "false", Values: trueFalse, Note: "openltm has no restjavad"},
	// [S] banners and GUI preferences of hardening scripts; defaults [M].
	{Name: "ui.advisory.enabled", Default: "false", Values: trueFalse, Note: "openltm has no GUI"},
	{Name: "ui.advisory.color", Default: "green", Values: []string{"blue", "green", "orange", "red", "yellow"}, Note: "openltm has no GUI"},
	{Name: "ui.advisory.text", Default: "", Note: "openltm has no GUI"},
	{Name: "ui.system.preferences.recordsperscreen", Default: "10", Number: true, Min: 1, Max: 1000, Note: "openltm has no GUI"},
	{Name: "ui.system.preferences.startscreen", Default: "welcome", Note: "openltm has no GUI"},
	{Name: "ui.system.preferences.advancedselection", Default: "basic", Values: []string{"basic", "advanced"}, Note: "openltm has no GUI"},
	// [S] debug logging recipes and their reverts ("revert: notice",
	// "default behaviour: info"); others [M]. The SSL level filters the
	// failed handshakes' lines in the ltm log, the GTM level the GSLB's
	// and iQuery's lines in ltmd's log (daemon/loglevels.go).
	{Name: "log.ssl.level", Default: "warning", Values: logLevels, Fold: true, Acted: true},
	{Name: "log.gtm.level", Default: "notice", Values: logLevels, Fold: true, Acted: true},
	{Name: "log.sdmd.level", Default: "info", Values: logLevels, Fold: true, Note: "openltm has no sdmd"},
	{Name: "log.keymgmtd.level", Default: "notice", Values: logLevels, Fold: true, Note: "openltm has no keymgmtd"},
	{Name: "gtm.debugprobelogging", Default: "disable", Values: onOff, Note: "openltm's GSLB monitors log at sys db log.gtm.level"},
}

var (
	onOff     = []string{"enable", "disable"}
	trueFalse = []string{"true", "false"}
	logLevels = []string{"emergency", "alert", "critical", "error", "warning", "notice", "informational", "info", "debug"}
)

// dbByName indexes dbKeys.
var dbByName = func() map[string]*DBKey {
	m := make(map[string]*DBKey, len(dbKeys))
	for i := range dbKeys {
		m[dbKeys[i].Name] = &dbKeys[i]
	}
	return m
}()

// LookupDBKey finds a db key openltm knows, so that the daemon reads an
// unset key as BIG-IP's default.
func LookupDBKey(name string) (*DBKey, bool) {
	k, ok := dbByName[name]
	return k, ok
}

// DBKeys are the db keys openltm knows, sorted by name, for help and
// tests that walk them all.
func DBKeys() []DBKey {
	out := append([]DBKey(nil), dbKeys...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Expected says what the key takes, for the error that refuses a value.
func (d *DBKey) Expected() string {
	switch {
	case d.Number:
		return fmt.Sprintf("an integer from %d to %d", d.Min, d.Max)
	case len(d.Values) == 2:
		return d.Values[0] + " or " + d.Values[1]
	case len(d.Values) > 2:
		return "one of " + strings.Join(d.Values, ", ")
	}
	return "any text"
}

// Check refuses a value the key does not take with BIG-IP's 01070734
// DB validation exception, naming what would be valid.
func (d *DBKey) Check(value string) error {
	ok := true
	switch {
	case d.Number:
		n, err := strconv.ParseInt(value, 10, 64)
		ok = err == nil && n >= d.Min && n <= d.Max
	case len(d.Values) > 0:
		ok = false
		for _, v := range d.Values {
			if v == value || d.Fold && strings.EqualFold(v, value) {
				ok = true
				break
			}
		}
	}
	if ok {
		return nil
	}
	return &ConfigError{Code: "01070734", Msg: fmt.Sprintf("Configuration error: DB validation exception, invalid value (%s) for db variable (%s): expected %s", value, d.Name, d.Expected())}
}

// CheckDBKey refuses a db key name openltm does not know when it is a
// misspelling of one it knows (tm.rstcause.lgo), with BIG-IP's 01020036
// not-found error and the name meant; ok is false for any other unknown
// name, which the caller keeps with a warning [M: BIG-IP refuses every
// name it lacks, but openltm knows only some of BIG-IP's 2,257 keys].
func CheckDBKey(name string) (known bool, err error) {
	if _, ok := dbByName[name]; ok {
		return true, nil
	}
	best, dist := "", 3
	for i := range dbKeys {
		if d := editDistance(name, dbKeys[i].Name, dist); d < dist {
			best, dist = dbKeys[i].Name, d
		}
	}
	if best != "" {
		return false, &ConfigError{Code: "01020036", Msg: fmt.Sprintf("The requested database variable (%s) was not found; did you mean %s?", name, best)}
	}
	return false, nil
}

// editDistance is the Levenshtein distance of a and b, or limit when it
// is at least limit (key names are short; the table is small).
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			c = min(c, prev[j]+1, cur[j-1]+1)
			cur[j] = c
			low = min(low, c)
		}
		if low >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

// ActsOnObject reports whether openltm acts on the object name of kind k:
// a kind that is not passive, one of the sys db keys that act, or the
// provisioning of a module openltm runs, so that tmsh does not warn that
// the object is only kept.
func (k *Kind) ActsOnObject(name string) bool {
	if !k.Passive {
		return true
	}
	switch k.Key() {
	case "sys db":
		d, ok := dbByName[name]
		return ok && d.Acted
	case "sys provision":
		// The modules openltm runs, whose level it lists and shows
		// (daemon/provision.go).
		return name == "ltm" || name == "gtm"
	}
	return false
}

// dbDefault is the value an unset db key lists: BIG-IP's default for the
// keys openltm knows; other keys list as { } until set [M].
func dbDefault(name string) (string, bool) {
	if d, ok := dbByName[name]; ok {
		return d.Default, true
	}
	return "", false
}

// Listed are the objects `list` shows for kind k: those of the
// configuration, and for sys db every known key not set, at its default,
// as BIG-IP lists its whole db.
func (c *Config) Listed(k *Kind) []*Object {
	out := c.Of(k)
	if k.Key() != "sys db" {
		return out
	}
	for i := range dbKeys {
		if c.objs[k.Key()+"\x00"+dbKeys[i].Name] == nil {
			out = append(out, c.Get(k, dbKeys[i].Name))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
