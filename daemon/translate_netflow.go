package daemon

import (
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/ipfix"
	"github.com/openltm/openltm/dataplane/netflow"
	"github.com/openltm/openltm/objects"
)

// The netflow profile (dataplane/netflow).
var (
	profileNetflow   = schema.MustKind("ltm profile netflow")
	netflowVersion   = profileNetflow.MustProp("netflow-version")
	netflowPublisher = profileNetflow.MustProp("log-publisher")
)

// netflowVersions are netflow-version's values.
var netflowVersions = map[string]ipfix.Version{
	"version-5": ipfix.NetFlowV5,
	"version-9": ipfix.NetFlowV9,
	"ipfix":     ipfix.IPFIX,
}

// netflow gives the virtual its netflow profile. A profile without a
// log-publisher, or whose publisher has no ipfix destination, is kept
// with a warning: its connections are counted and their records dropped.
func (t *translator) netflow(o *objects.Object, v *dataplane.Virtual) {
	p := t.profile(o, profileNetflow)
	if p == nil {
		return
	}
	nf := &netflow.Profile{Name: p.Name, Version: netflowVersions[netflowVersion.Effective(t.cfg, p)], Virtual: o.Name}
	if nf.Version == 0 {
		nf.Version = ipfix.NetFlowV5
	}
	var sw *hslSwitch
	if t.rules != nil && t.rules.e != nil {
		sw = &t.rules.e.rules.rt.hsl
		nf.Stats = sw.netflow.get(p.Name)
		ts := ipfixSwitch{sw}.Templates()
		nf.V4, _ = ts.Create(ipfix.IANA(), netflow.TemplateSpec("IPv4"))
		nf.V6, _ = ts.Create(ipfix.IANA(), netflow.TemplateSpec("IPv6"))
		if nf.Version == ipfix.IPFIX {
			// IPFIX records carry the virtual's name (F5's contextName).
			x4, _ := ts.Create(netflow.Elements(), netflow.TemplateSpecNamed("IPv4"))
			x6, _ := ts.Create(netflow.Elements(), netflow.TemplateSpecNamed("IPv6"))
			if netflow.CheckTemplateNamed(x4) && netflow.CheckTemplateNamed(x6) {
				nf.X4, nf.X6 = x4, x6
			}
		}
	} else {
		nf.Stats = &netflow.Stats{}
	}
	name := noneEmpty(netflowPublisher.Effective(t.cfg, p))
	if name == "" {
		t.note(o, "netflow profile %s has no log-publisher: the virtual's flow records go nowhere (modify ltm profile netflow %s log-publisher NAME, a publisher with an ipfix destination)", p.Name, p.Name)
		v.NetFlow = nf
		return
	}
	pub := t.cfg.Lookup(t.s, []string{logPublisher.Key()}, objects.FullPath(folderOf(p.Name), name))
	if pub == nil {
		t.refuse("profile %s: log-publisher %s: no such sys log-config publisher", p.Name, name)
		return
	}
	nf.Publisher = pub.Name
	hasIPFIX := false
	if dl := logPublisherDests.Get(pub); dl != nil {
		for _, it := range dl.Items {
			if t.cfg.Lookup(t.s, []string{logDestIPFIX.Key()}, objects.FullPath(folderOf(pub.Name), it.Name)) != nil {
				hasIPFIX = true
			}
		}
	}
	if !hasIPFIX {
		t.note(o, "netflow profile %s: log publisher %s has no ipfix destination (sys log-config destination ipfix): the virtual's flow records go nowhere", p.Name, pub.Name)
	}
	if sw != nil {
		nf.Sink = &netflowSink{sw: sw, pub: pub.Name}
	}
	v.NetFlow = nf
}
