package monitor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
)

// RADIUSCheck is the radius and radius-accounting monitors' settings: the
// shared secret, the account the radius monitor authenticates ("" for
// none) and the NAS-IP-Address both send (invalid: none).
type RADIUSCheck struct {
	Secret, Username, Password string
	NASIP                      netip.Addr
}

func (c *RADIUSCheck) equal(o *RADIUSCheck) bool {
	if c == nil || o == nil {
		return c == o
	}
	return *c == *o
}

// probeRADIUS sends one Access-Request (radius) or Accounting-Request
// (radius-accounting) with layeh.com/radius, resent every second until
// the deadline as RADIUS clients do over UDP. The radius monitor is up
// only on an Access-Accept (the account authenticates) [M]; the
// accounting monitor on an Accounting-Response. An answer whose
// authenticator the secret does not verify is not taken as one.
func probeRADIUS(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	c := spec.RADIUS
	if c == nil {
		c = &RADIUSCheck{}
	}
	code := radius.CodeAccessRequest
	if spec.Type == RADIUSAccounting {
		code = radius.CodeAccountingRequest
	}
	p := radius.New(code, []byte(c.Secret))
	if c.Username != "" {
		rfc2865.UserName_SetString(p, c.Username)
	}
	if c.NASIP.IsValid() {
		rfc2865.NASIPAddress_Set(p, net.IP(c.NASIP.AsSlice()))
	}
	if code == radius.CodeAccessRequest {
		if c.Password != "" {
			rfc2865.UserPassword_SetString(p, c.Password)
		}
	} else {
		id := make([]byte, 8)
		rand.Read(id)
		rfc2866.AcctStatusType_Set(p, rfc2866.AcctStatusType_Value_Start)
		rfc2866.AcctSessionID_SetString(p, hex.EncodeToString(id))
	}
	client := &radius.Client{Retry: time.Second, MaxPacketErrors: 10, Dialer: *dialer(ctx)}
	resp, err := client.Exchange(ctx, p, target.String())
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
			return Outcome{}, ErrNoResponse
		}
		return Outcome{}, fmt.Errorf("Unable to receive; %v", unwrapSyscall(err))
	}
	switch {
	case code == radius.CodeAccessRequest && resp.Code == radius.CodeAccessAccept,
		code == radius.CodeAccountingRequest && resp.Code == radius.CodeAccountingResponse:
		return Outcome{Up: true}, nil
	}
	return Outcome{}, fmt.Errorf("Unexpected response: %v", resp.Code)
}
