package daemon

import (
	"fmt"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/fix"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// The fix profile as TCP virtuals apply it (dataplane/internal/l4/fix.go).
var (
	profileFIX       = schema.MustKind("ltm profile fix")
	fixErrorAction   = profileFIX.MustProp("error-action")
	fixFullLogon     = profileFIX.MustProp("full-logon-parsing")
	fixQuick         = profileFIX.MustProp("quick-parsing")
	fixResponse      = profileFIX.MustProp("response-parsing")
	fixSenderTagsRow = profileFIX.MustProp("sender-tag-class")
	fixMessageLog    = profileFIX.MustProp("message-log-publisher")
	fixReportLog     = profileFIX.MustProp("report-log-publisher")
	fixStatsInterval = profileFIX.MustProp("statistics-sample-interval")
)

// fix gives a TCP virtual its fix profile. BIG-IP refuses the profile
// without a tcp profile and beside an http, ftp, sip or mqtt profile,
// which would parse the same bytes [M: the messages are openltm's].
// sender-tag-class's data groups must exist and map tag numbers to tag
// numbers. The messages are read inside client-ssl's and server-ssl's
// records as MQTT's are (FIX over TLS, as F5's FIX profile with an SSL
// profile). Where the message reader does not run (stream, mblb, an SSL
// forward proxy, rules that read the flow's bytes in CLIENT_DATA or
// SERVER_DATA) the virtual passes FIX through as plain TCP, with a
// warning. It returns
// false when the virtual was left out.
func (t *translator) fix(o *objects.Object, v *dataplane.Virtual) bool {
	p := t.profile(o, profileFIX)
	if p == nil {
		return true
	}
	for _, k := range []*objects.Kind{profileHTTP, profileFTP, profileSIP, profileMQTT} {
		if other := t.profile(o, k); other != nil {
			return t.refuse("profile %s (fix) cannot be used with %s profile %s on the virtual server (%s)", p.Name, k.Words[len(k.Words)-1], other.Name, o.Name)
		}
	}
	if t.profile(o, profileTCP) == nil || v.IsUDP() {
		return t.refuse("profile %s (fix) requires a tcp profile on the virtual server (%s)", p.Name, o.Name)
	}
	e := func(pr *objects.Prop) string { return pr.Effective(t.cfg, p) }
	opt := &fix.Options{Profile: p.Name, Max: fix.DefaultMax,
		DropConnection: e(fixErrorAction) == "drop-connection",
		FullLogon:      e(fixFullLogon) == "true",
		Quick:          e(fixQuick) == "true",
		Response:       e(fixResponse) == "true",
	}
	if c := t.cfg.Effective(p, fixSenderTagsRow.Name); c != nil {
		for _, it := range c.Items {
			sender, class := fixItemValue(it, "sender-id"), fixItemValue(it, "tag-map-class")
			if sender == "" || class == "" {
				return t.refuse("profile %s (fix): sender-tag-class %s needs a sender-id and a tag-map-class", p.Name, it.Name)
			}
			tags, err := t.fixTagMap(class)
			if err != nil {
				return t.refuse("profile %s (fix): sender-tag-class %s: %v", p.Name, it.Name, err)
			}
			if opt.SenderTags == nil {
				opt.SenderTags = make(map[string]map[int]int)
			}
			opt.SenderTags[sender] = tags
		}
	}
	lg, err := t.fixLog(p)
	if err != nil {
		return t.refuse("%v", err)
	}
	opt.Log = lg
	without := func(why string) bool {
		t.keep(o, "profile %s: openltm's FIX parser %s; the virtual passes FIX through without it", p.Name, why)
		return true
	}
	if why := gatewayBlocked(v); why != "" { // translate_ftp.go
		return without(why)
	}
	v.FIX = opt
	return true
}

// fixItemValue is a collection item's plain setting, "" for none.
func fixItemValue(it *objects.Item, name string) string {
	if s := it.Props[name]; s != nil && s.Str != "none" {
		return strings.TrimSpace(s.Str)
	}
	return ""
}

// fixTagMap reads a tag-map data group: a string or integer group whose
// records map a tag number (key) to a tag number (data).
func (t *translator) fixTagMap(name string) (map[int]int, error) {
	dg := t.cfg.Lookup(t.s, specDataGroup, name)
	if dg == nil {
		return nil, fmt.Errorf("data group %s does not exist", name)
	}
	if dataGroupType.Effective(t.cfg, dg) == "ip" {
		return nil, fmt.Errorf("%s is an address data group, not a tag map (string or integer)", dg.Name)
	}
	var recs [][2]string
	if v := dataGroupRecords.Get(dg); v != nil {
		for _, it := range v.Items {
			d := ""
			if x := dataGroupRecordData.In(it); x != nil {
				d = x.Str
			}
			recs = append(recs, [2]string{it.Name, d})
		}
	}
	tags, err := fix.TagMap(recs)
	if err != nil {
		return nil, fmt.Errorf("tag map %s: %v", dg.Name, err)
	}
	return tags, nil
}

// fixNeeds refuses a rule list whose FIX_ events need a fix profile the
// virtual server lacks (01070394 [M]).
func (t *translator) fixNeeds(o *objects.Object, list []*rules.Rule) bool {
	return t.profileNeeds(o, list, profileFIX, "FIX", (*rules.Rule).FIXNeeds) // translate_stream.go
}

// fixLog is the profile's log publishers, nil when it names none; each
// must exist. statistics-sample-interval paces report-log-publisher's
// status reports (0: none).
func (t *translator) fixLog(p *objects.Object) (*fix.Log, error) {
	var l fix.Log
	for _, c := range []struct {
		prop *objects.Prop
		dst  *string
	}{{fixMessageLog, &l.Message}, {fixReportLog, &l.Report}} {
		name := noneEmpty(c.prop.Effective(t.cfg, p))
		if name == "" {
			continue
		}
		pub := t.cfg.Lookup(t.s, []string{logPublisher.Key()}, objects.FullPath(folderOf(p.Name), name))
		if pub == nil {
			return nil, fmt.Errorf("profile %s (fix): %s %s: no such sys log-config publisher", p.Name, c.prop.Name, name)
		}
		*c.dst = pub.Name
	}
	if l.Message == "" && l.Report == "" {
		return nil, nil
	}
	if n := atoi(fixStatsInterval.Effective(t.cfg, p)); n > 0 {
		l.Interval = time.Duration(n) * time.Second
	}
	if t.rules != nil && t.rules.e != nil {
		l.Send = t.rules.e.rules.rt.hsl.sendPublisher // the running configuration's publishers
	}
	return &l, nil
}
