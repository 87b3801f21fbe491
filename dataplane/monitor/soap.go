package monitor

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// SOAPCheck is the soap monitor's call: a SOAP method of a web service
// with one optional parameter, and the answer that means up (a return
// value, or a fault when one is expected). A web service that accepts
// connections and serves pages may still fail its calls; only a call
// proves it works.
type SOAPCheck struct {
	HTTPS      bool   // protocol https; false is http (BIG-IP's default)
	URLPath    string // the service's path; "" is /
	Namespace  string // the method's namespace; "" is none
	Method     string // the method called; required
	SOAPAction string // the SOAPAction header's value; "" sends ""
	// ParamName names the one parameter sent ("" sends none), of
	// ParamType (bool, int, long or string; "" is bool) and ParamValue.
	ParamName, ParamType, ParamValue string
	// ReturnValue, when set, is what the call must return, compared as
	// ReturnType (bool, char, double, int, long, short or string; "" is
	// bool).
	ReturnType, ReturnValue string
	// ExpectFault makes a SOAP fault the answer that means up.
	ExpectFault bool
	// Username and Password, when set, log in with HTTP basic
	// authentication [M].
	Username, Password string
}

func (c *SOAPCheck) equal(o *SOAPCheck) bool {
	if c == nil || o == nil {
		return c == o
	}
	return *c == *o
}

func (c *SOAPCheck) check() error {
	if c == nil || c.Method == "" {
		return errors.New("a soap monitor needs method (the SOAP method to call)")
	}
	if !xmlName(c.Method) {
		return fmt.Errorf("method %q is not an XML element name", c.Method)
	}
	if c.URLPath != "" && !strings.HasPrefix(c.URLPath, "/") {
		return fmt.Errorf("url-path %q does not start with /", c.URLPath)
	}
	for _, f := range [...]struct{ name, v string }{{"url-path", c.URLPath}, {"soap-action", c.SOAPAction},
		{"namespace", c.Namespace}, {"username", c.Username}, {"password", c.Password}} {
		if strings.ContainsAny(f.v, "\r\n\x00") {
			return fmt.Errorf("%s must not contain a line break or NUL", f.name)
		}
	}
	if c.ParamType != "" && !slices.Contains(soapParamTypes, c.ParamType) {
		return fmt.Errorf("parameter-type %q is not one of %s", c.ParamType, strings.Join(soapParamTypes, ", "))
	}
	if c.ReturnType != "" && !slices.Contains(soapReturnTypes, c.ReturnType) {
		return fmt.Errorf("return-type %q is not one of %s", c.ReturnType, strings.Join(soapReturnTypes, ", "))
	}
	if c.ParamName != "" {
		if !xmlName(c.ParamName) {
			return fmt.Errorf("parameter-name %q is not an XML element name", c.ParamName)
		}
		if _, err := soapValue(c.ParamType, c.ParamValue); err != nil {
			return fmt.Errorf("parameter-value: %v", err)
		}
	}
	if c.ReturnValue != "" {
		if _, err := soapValue(c.ReturnType, c.ReturnValue); err != nil {
			return fmt.Errorf("return-value: %v", err)
		}
	}
	return nil
}

// ErrNoFault is an answer without the SOAP fault a monitor with
// expect-fault yes waits for.
var ErrNoFault = errors.New("Response is not the SOAP fault expected")

// probeSOAP posts the call to the member (over TLS with protocol https;
// the member's certificate is not verified, as with the https monitor)
// and judges the SOAP answer: with expect-fault, a fault is up and
// anything else down; without, a fault is down, and the return value,
// when ReturnValue is set, must equal it as ReturnType. A fault may come
// with any HTTP status (SOAP 1.1 sends 500); any other answer must have
// a 2xx status.
func probeSOAP(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	c := spec.SOAP
	if err := c.check(); err != nil {
		return Outcome{}, err
	}
	scheme, path := "http", c.URLPath
	if c.HTTPS {
		scheme = "https"
	}
	if path == "" {
		path = "/"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, scheme+"://"+target.String()+path, bytes.NewReader(soapEnvelope(c)))
	if err != nil {
		return Outcome{}, fmt.Errorf("url-path %q: %v", c.URLPath, err)
	}
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	req.Header.Set("SOAPAction", `"`+c.SOAPAction+`"`)
	if c.Username != "" {
		req.SetBasicAuth(c.Username, c.Password)
	}
	client := &http.Client{
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return dialer(ctx).DialContext(ctx, "tcp", target.String())
			},
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
			DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return Outcome{}, httpFailure(ctx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReply+1))
	if err != nil {
		return Outcome{}, httpFailure(ctx, err)
	}
	if len(body) > maxReply {
		return Outcome{}, errTooLong
	}
	a, err := readSOAP(body)
	if err != nil {
		if resp.StatusCode/100 != 2 {
			return Outcome{}, fmt.Errorf("HTTP status %s", resp.Status)
		}
		return Outcome{}, err
	}
	switch {
	case c.ExpectFault && a.fault:
		return Outcome{Up: true}, nil
	case c.ExpectFault:
		return Outcome{}, ErrNoFault
	case a.fault:
		return Outcome{}, fmt.Errorf("SOAP fault: %s", a.reason)
	case resp.StatusCode/100 != 2:
		return Outcome{}, fmt.Errorf("HTTP status %s", resp.Status)
	case c.ReturnValue == "":
		return Outcome{Up: true}, nil
	}
	want, _ := soapValue(c.ReturnType, c.ReturnValue)
	got, err := soapValue(c.ReturnType, a.value)
	if err != nil {
		return Outcome{}, fmt.Errorf("Return value: %v", err)
	}
	if got != want {
		return Outcome{}, fmt.Errorf("Return value %q is not %q", a.value, c.ReturnValue)
	}
	return Outcome{Up: true}, nil
}

// httpFailure words an HTTP exchange's failure as the monitors' errors
// do: the deadline is no response, a failed dial cannot connect.
func httpFailure(ctx context.Context, err error) error {
	if ctx.Err() != nil || netTimeout(err) {
		return ErrNoResponse
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return fmt.Errorf("Unable to connect; %v", op.Err)
	}
	var rec tls.RecordHeaderError
	if errors.As(err, &rec) {
		return fmt.Errorf("SSL handshake failed; %v", err)
	}
	return fmt.Errorf("Unable to receive; %v", unwrapSyscall(err))
}
