package daemon

import (
	"fmt"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/ftpalg"
	"github.com/openltm/openltm/objects"
)

// The ftp profile as the FTP gateway applies it: port (the data port),
// translate-extended and allow-ftps; the others are kept only.
var (
	profileFTP      = schema.MustKind("ltm profile ftp")
	ftpDataPort     = profileFTP.MustProp("port")
	ftpTranslateExt = profileFTP.MustProp("translate-extended")
	ftpAllowFTPS    = profileFTP.MustProp("allow-ftps")
	// ruleDataEvents are the events whose rules read a flow's bytes,
	// which the protocol gateways (ftp, mqtt, fix, rtsp, diameter, the
	// STARTTLS offloads) read message by message themselves.
	ruleDataEvents = []dataplane.Event{dataplane.EventClientData, dataplane.EventServerData}
)

// plainGatewayBlocked says why a protocol gateway that reads plaintext
// TCP messages itself (ftp, fix, rtsp) cannot run on virtual
// v: another reader of the same bytes (mblb, stream, rules) or TLS on
// either side; "" when it can.
func plainGatewayBlocked(v *dataplane.Virtual) string {
	if v.TLS != nil && v.MBLB == nil {
		return "reads plaintext connections only (no client-ssl or server-ssl profile)"
	}
	return gatewayBlocked(v)
}

// gatewayBlocked says why a protocol gateway that reads TCP messages
// itself, over TLS too (mqtt, diameter), cannot run on virtual v:
// another reader of the same bytes (mblb, stream, rules) or an SSL
// forward proxy; "" when it can.
func gatewayBlocked(v *dataplane.Virtual) string {
	switch {
	case v.MBLB != nil:
		return "does not run on message-based virtuals (an mblb profile)"
	case v.TLS != nil && v.TLS.Forward != nil:
		return "does not run on an SSL forward proxy"
	case v.Stream != nil:
		return "does not run with a stream profile"
	}
	return rulesReadBytes(v)
}

// rulesReadBytes says why a protocol gateway cannot run on virtual v
// because its rules read the flow's bytes too ("" when they do not).
func rulesReadBytes(v *dataplane.Virtual) string {
	if v.Rules == nil {
		return ""
	}
	for _, ev := range ruleDataEvents {
		if v.Rules.Handles(ev) {
			return fmt.Sprintf("does not run on virtuals whose rules handle %s", ev)
		}
	}
	return ""
}

// ftpOptions reads an ftp profile's effective properties. The port may
// be a number or a service name (ftp-data, BIG-IP's default, is 20).
func (t *translator) ftpOptions(p *objects.Object) (*ftpalg.Options, error) {
	e := func(pr *objects.Prop) string { return pr.Effective(t.cfg, p) }
	port, err := objects.ParsePort(e(ftpDataPort))
	if err != nil {
		return nil, fmt.Errorf("port: %v", err)
	}
	return &ftpalg.Options{
		Profile:           p.Name,
		DataPort:          uint16(port),
		TranslateExtended: e(ftpTranslateExt) != "disabled",
		AllowFTPS:         e(ftpAllowFTPS) == "enabled",
	}, nil
}

// ftp gives a TCP virtual its ftp profile. BIG-IP refuses the profile
// without a tcp profile (the gateway reads a TCP stream) and beside an
// http profile (the two parse the same bytes) [M: the messages are
// openltm's]. Where openltm's gateway does not run (TLS, stream, mblb,
// rules that handle CLIENT_DATA or SERVER_DATA, which would read the
// bytes the gateway reads) the
// virtual is served as it was before the profile was acted on, passing
// the control connection through without rewriting it, with a warning.
// It returns false when the virtual was left out.
func (t *translator) ftp(o *objects.Object, v *dataplane.Virtual) bool {
	p := t.profile(o, profileFTP)
	if p == nil {
		return true
	}
	if hp := t.profile(o, profileHTTP); hp != nil {
		return t.refuse("profile %s (ftp) cannot be used with http profile %s on the virtual server (%s)", p.Name, hp.Name, o.Name)
	}
	if t.profile(o, profileTCP) == nil || v.IsUDP() {
		return t.refuse("profile %s (ftp) requires a tcp profile on the virtual server (%s)", p.Name, o.Name)
	}
	opt, err := t.ftpOptions(p)
	if err != nil {
		t.skip(o, "profile %s: %v", p.Name, err)
		return false
	}
	without := func(why string) bool {
		t.keep(o, "profile %s: openltm's FTP gateway %s; the virtual passes FTP through without it", p.Name, why)
		return true
	}
	if why := plainGatewayBlocked(v); why != "" {
		return without(why)
	}
	v.FTP = opt
	return true
}
