package authn

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
)

// RADIUSServer is an `ltm auth radius-server`.
type RADIUSServer struct {
	// Addr is host:port.
	Addr    string
	Secret  []byte
	Timeout time.Duration
}

// RADIUS is an `ltm auth radius` configuration: an Access-Request with
// the client's user name and password goes to each server in order
// until one answers; Access-Accept is a success, Access-Reject a
// failure, Access-Challenge a request for more (WantCredential, its
// Reply-Message the prompt).
type RADIUS struct {
	Servers []RADIUSServer
	// Retries is how many times a server is asked before the next one
	// (retries, 3 by default).
	Retries int
	// ClientID is sent as NAS-Identifier when set (client-id).
	ClientID string
	// ServiceType is the Service-Type attribute's value, 0 for none
	// (service-type default).
	ServiceType rfc2865.ServiceType
}

// Authenticate implements Backend.
func (rd *RADIUS) Authenticate(ctx context.Context, r Request) Result {
	if r.Username == "" {
		return Result{Status: Failure, Err: errNoCredentials}
	}
	var last error
	for _, s := range rd.Servers {
		if ctx.Err() != nil {
			break
		}
		p := radius.New(radius.CodeAccessRequest, s.Secret)
		if err := rfc2865.UserName_SetString(p, r.Username); err != nil {
			return Result{Status: Failure, Err: err}
		}
		if err := rfc2865.UserPassword_SetString(p, r.Password); err != nil {
			return Result{Status: Failure, Err: err}
		}
		if rd.ClientID != "" {
			rfc2865.NASIdentifier_SetString(p, rd.ClientID)
		}
		if rd.ServiceType != 0 {
			rfc2865.ServiceType_Set(p, rd.ServiceType)
		}
		if r.State != nil {
			rfc2865.State_Set(p, r.State)
		}
		timeout := s.Timeout
		if timeout <= 0 {
			timeout = 3 * time.Second
		}
		tries := rd.Retries
		if tries <= 0 {
			tries = 1
		}
		// The server is asked again each timeout until it has been asked
		// retries times [M: BIG-IP's pam_radius waits timeout seconds a try].
		cctx, cancel := context.WithTimeout(ctx, timeout*time.Duration(tries))
		client := &radius.Client{Retry: timeout}
		resp, err := client.Exchange(cctx, p, s.Addr)
		cancel()
		if err != nil {
			last = fmt.Errorf("RADIUS server %s: %w", s.Addr, err)
			continue
		}
		out := Result{Data: radiusData(resp)}
		switch resp.Code {
		case radius.CodeAccessAccept:
			out.Status = Success
		case radius.CodeAccessReject:
			out.Status = Failure
			out.Err = fmt.Errorf("RADIUS server %s: Access-Reject", s.Addr)
			if m := rfc2865.ReplyMessage_GetString(resp); m != "" {
				out.Err = fmt.Errorf("RADIUS server %s: Access-Reject: %s", s.Addr, m)
			}
		case radius.CodeAccessChallenge:
			out.Status = WantCredential
			out.Prompt = rfc2865.ReplyMessage_GetString(resp)
			out.PromptStyle = "echo_off"
			out.CredType = "password"
			out.State = rfc2865.State_Get(resp)
		default:
			last = fmt.Errorf("RADIUS server %s: unexpected %v", s.Addr, resp.Code)
			continue
		}
		return out
	}
	if last == nil {
		last = errors.New("no RADIUS server configured")
		if ctx.Err() != nil {
			last = ctx.Err()
		}
	}
	return Result{Status: Error, Err: last}
}

// radiusData are a reply's attributes as AUTH::response_data gives them:
// radius:attr:TYPE and the value, text when it reads as text [M].
func radiusData(p *radius.Packet) []Attr {
	var out []Attr
	for _, a := range p.Attributes {
		v := string(a.Attribute)
		for _, b := range a.Attribute {
			if b < 0x20 || b > 0x7e {
				v = fmt.Sprintf("%x", []byte(a.Attribute))
				break
			}
		}
		out = append(out, Attr{"radius:attr:" + strconv.Itoa(int(a.Type)), v})
	}
	return out
}
