//go:build linux

package l4

// idleEnd ends a loop flow whose idle timeout fired: both sides reset
// (reset-on-timeout enabled, BIG-IP's default), or both closed with a
// FIN (disabled).
func (lf *loopFlow) idleEnd() {
	if lf.snap == nil || !lf.snap.Cfg.IdleFIN || lf.sfd < 0 {
		lf.abort(true)
		return
	}
	lf.closeBoth()
}
