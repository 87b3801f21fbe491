package objects

import "math"

// sFlow export (dataplane/sflow). F5's tmsh reference names the kinds and
// their properties: `sys sflow receiver` (address, port, max-datagram-size,
// state, description) and the four `sys sflow global-settings` singletons
// (http and vlan: poll-interval and sampling-rate; interface and system:
// poll-interval), and the http profile's `sflow { poll-interval
// poll-interval-global sampling-rate sampling-rate-global }` block. The
// defaults are BIG-IP's (a receiver: port 6343, max-datagram-size 1400,
// state disabled, as a listed receiver shows `state enabled` only when
// set; global http: 10 s and 1 in 1024; global vlan: 10 s and 1 in 2048
// (its sampling-rate samples the frames of each tagged net vlan's
// interfaces, dataplane/sflow/packets_linux.go);
// global interface 10 s; global system 60 s). F5 documents no range for
// the numbers: openltm's [M] are poll-interval 0..86400 seconds (0: no
// counter samples), sampling-rate 0..4294967295 (the sFlow field is 32
// bits; 0: no flow samples), max-datagram-size 200..9000 and port
// 1..65535.

// sflowPollInterval is a poll-interval row bounded as openltm bounds it.
func sflowPollInterval(def, h string) *Prop {
	p := help(num("poll-interval", def), h)
	p.Max = 86400
	return p
}

// sflowSamplingRate is a sampling-rate row.
func sflowSamplingRate(def, h string) *Prop {
	p := help(num("sampling-rate", def), h)
	p.Max = math.MaxUint32
	return p
}

// sflowKinds are the receiver and the global settings.
func sflowKinds() []*Kind {
	port := help(num("port", "6343"), "the receiver's UDP port")
	port.Min, port.Max = 1, 65535
	size := help(num("max-datagram-size", "1400"), "bytes an sFlow datagram to the receiver may take (its samples are split over several datagrams)")
	size.Min, size.Max = 200, 9000
	addr := help(str("address", "::"), "the receiver's IPv4 or IPv6 address")
	addr.Format = "ip"
	recv := &Kind{Words: []string{"sys", "sflow", "receiver"}, Title: "sFlow Receiver", Lower: "sflow receiver",
		Source: tmshRef("sys sflow receiver") + "; defaults: BIG-IP's (port 6343, max-datagram-size 1400, state disabled); ranges openltm's [M]", Help: "sFlow collector the system's flow and counter samples are sent to (sFlow version 5 over UDP)", Props: []*Prop{
			addr,
			str("description", "none"),
			size,
			port,
			help(ed("state", "disabled"), "enabled: the receiver is sent the samples"),
			passive(str("app-service", "none")),
		}}
	gs := func(kind, title, h string, props ...*Prop) *Kind {
		return &Kind{Words: []string{"sys", "sflow", "global-settings", kind}, Title: title, Singleton: true, Help: h,
			Source: tmshRef("sys sflow global-settings "+kind) + "; defaults: BIG-IP's; ranges openltm's [M]",
			Props:  append([]*Prop{str("description", "none")}, props...)}
	}
	vlanRate := sflowSamplingRate("2048", "one frame in this many of each tagged net vlan's interfaces is sent as a flow sample with its first 128 bytes (0: none)")
	return []*Kind{
		recv,
		gs("http", "sFlow HTTP Settings", "sFlow settings of the http profiles that take the global values",
			sflowPollInterval("10", "seconds between the http counter samples of each virtual (0: none)"),
			sflowSamplingRate("1024", "one request in this many is sent as a flow sample (0: none)")),
		gs("interface", "sFlow Interface Settings", "sFlow settings of the interfaces",
			sflowPollInterval("10", "seconds between the interface counter samples of each interface (0: none)")),
		gs("system", "sFlow System Settings", "sFlow settings of the system",
			sflowPollInterval("60", "seconds between the host counter samples (0: none)")),
		gs("vlan", "sFlow VLAN Settings", "sFlow settings of the VLANs",
			sflowPollInterval("10", "seconds between the vlan counter samples of each net vlan (0: none)"),
			vlanRate),
	}
}

// httpSFlow is the http profile's sflow block: the profile's own
// poll-interval and sampling-rate, used when the -global switch says no.
func httpSFlow() *Prop {
	return block("sflow", "sFlow",
		"per-virtual sFlow: sampling-rate (one request in N as a flow sample) and poll-interval (seconds between http counter samples), each from sys sflow global-settings http unless its -global switch is no",
		sflowPollInterval("0", "seconds between the virtual's http counter samples when poll-interval-global is no (0: none)"),
		help(enum("poll-interval-global", "yes", "yes", "no"), "yes: sys sflow global-settings http's poll-interval applies"),
		sflowSamplingRate("0", "one request in this many is sent as a flow sample when sampling-rate-global is no (0: none)"),
		help(enum("sampling-rate-global", "yes", "yes", "no"), "yes: sys sflow global-settings http's sampling-rate applies"),
	)
}
