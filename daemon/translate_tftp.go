package daemon

import (
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// The tftp profile as UDP virtuals apply it (dataplane/internal/udp/tftp.go).
var (
	profileTFTP = schema.MustKind("ltm profile tftp")
	tftpIdle    = profileTFTP.MustProp("idle-timeout")
)

// tftp makes a UDP virtual with a tftp profile a TFTP ALG: the member's
// answers from its transfer port reach the client. BIG-IP takes the
// profile on a UDP virtual only [M: the message is openltm's], and not
// beside another UDP application profile (sip, radius). The transfer
// follows one member, so datagram-load-balancing does not apply to it
// [M]. idle-timeout replaces the udp profile's for the transfer's flow.
func (t *translator) tftp(o *objects.Object, v *dataplane.Virtual, tp *objects.Object) bool {
	if !v.IsUDP() {
		return t.refuse("profile %s (tftp) requires a udp profile on the virtual server (%s); TFTP runs over UDP", tp.Name, o.Name)
	}
	if p := t.profile(o, profileSIP); p != nil {
		return t.refuse("profile %s (tftp) cannot be used with sip profile %s on the virtual server (%s)", tp.Name, p.Name, o.Name)
	}
	if p := t.profile(o, profileRADIUS); p != nil {
		return t.refuse("profile %s (tftp) cannot be used with radius profile %s on the virtual server (%s)", tp.Name, p.Name, o.Name)
	}
	tc := &dataplane.TFTPProfile{}
	if s := tftpIdle.Effective(t.cfg, tp); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return t.refuse("profile %s (tftp): idle-timeout %q is not a number of seconds (virtual server %s)", tp.Name, s, o.Name)
		}
		tc.Idle = time.Duration(n) * time.Second
	}
	v.TFTP = tc
	return true
}
