package daemon

import (
	"strconv"

	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// Traffic classes (objects/kinds_trafficclass.go): each virtual's
// traffic-classes resolved into the classes LB::class matches its
// connections against (rules.Env.TrafficClasses). Nothing is matched on
// a connection unless a rule asks.
var (
	ltmTrafficClass  = schema.MustKind("ltm traffic-class")
	vsTrafficClasses = ltmVirtual.MustProp("traffic-classes")
	tcClassification = ltmTrafficClass.MustProp("classification")
	tcSrcAddr        = ltmTrafficClass.MustProp("source-address")
	tcSrcMask        = ltmTrafficClass.MustProp("source-mask")
	tcDstAddr        = ltmTrafficClass.MustProp("destination-address")
	tcDstMask        = ltmTrafficClass.MustProp("destination-mask")
	tcSrcPort        = ltmTrafficClass.MustProp("source-port")
	tcDstPort        = ltmTrafficClass.MustProp("destination-port")
	tcProtocol       = ltmTrafficClass.MustProp("protocol")
)

// tcProtocols are the protocol numbers a class's protocol names.
var tcProtocols = map[string]int{"any": 0, "tcp": 6, "udp": 17, "sctp": 132}

// virtualTrafficClasses maps each virtual naming traffic classes to
// them. A class that does not resolve (the commit checks refuse that
// first) is left out.
func virtualTrafficClasses(cfg *objects.Config) map[string][]rules.TrafficClass {
	out := map[string][]rules.TrafficClass{}
	for _, v := range cfg.Of(ltmVirtual) {
		val := vsTrafficClasses.Get(v)
		if val == nil {
			continue
		}
		for _, name := range val.List {
			o := cfg.Get(ltmTrafficClass, name)
			if o == nil {
				continue
			}
			c, ok := trafficClass(cfg, o)
			if ok {
				out[v.Name] = append(out[v.Name], c)
			}
		}
	}
	return out
}

func trafficClass(cfg *objects.Config, o *objects.Object) (rules.TrafficClass, bool) {
	e := func(p *objects.Prop) string { return p.Effective(cfg, o) }
	src, ok1 := objects.TrafficClassMask(e(tcSrcAddr), e(tcSrcMask))
	dst, ok2 := objects.TrafficClassMask(e(tcDstAddr), e(tcDstMask))
	sp, _ := strconv.Atoi(e(tcSrcPort))
	dp, _ := strconv.Atoi(e(tcDstPort))
	proto, ok3 := tcProtocols[e(tcProtocol)]
	if !ok1 || !ok2 || !ok3 {
		return rules.TrafficClass{}, false
	}
	return rules.TrafficClass{Name: o.Name, Classification: e(tcClassification), Src: src, Dst: dst,
		SrcPort: uint16(sp), DstPort: uint16(dp), Proto: proto}, true
}
