package monitor

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

// calcService is a fake SOAP service in namespace urn:calc: Inc returns
// its int parameter n plus one, Boom answers a SOAP 1.1 fault, Boom12 a
// SOAP 1.2 one. /secure asks for basic authentication as mon/pw,
// /action for the SOAPAction "urn:calc#Inc", /html answers a web page,
// and /slow answers nothing until the client leaves.
func calcService(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/html":
		io.WriteString(w, "<html><body>it works</body></html>")
		return
	case "/slow":
		io.Copy(io.Discard, r.Body) // so the server sees the client leave
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
		return
	case "/secure":
		if u, p, ok := r.BasicAuth(); !ok || u != "mon" || p != "pw" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
	case "/action":
		if r.Header.Get("SOAPAction") != `"urn:calc#Inc"` {
			soapFault(w, soap11Env, "no such action "+r.Header.Get("SOAPAction"))
			return
		}
	case "/calc":
	default:
		http.NotFound(w, r)
		return
	}
	var req struct {
		Body struct {
			Call struct {
				XMLName xml.Name
				N       struct {
					Type  string `xml:"http://www.w3.org/2001/XMLSchema-instance type,attr"`
					Value string `xml:",chardata"`
				} `xml:"urn:calc n"`
			} `xml:",any"`
		} `xml:"http://schemas.xmlsoap.org/soap/envelope/ Body"`
	}
	if err := xml.NewDecoder(r.Body).Decode(&req); err != nil || r.Header.Get("Content-Type") != "text/xml; charset=utf-8" {
		soapFault(w, soap11Env, fmt.Sprintf("bad request: %v", err))
		return
	}
	call := req.Body.Call
	switch {
	case call.XMLName == xml.Name{Space: "urn:calc", Local: "Inc"} && call.N.Type == "xsd:int":
		n, _ := strconv.Atoi(call.N.Value)
		fmt.Fprintf(w, `<?xml version="1.0"?><s:Envelope xmlns:s="%s"><s:Body><IncResponse xmlns="urn:calc"><IncResult>%d</IncResult></IncResponse></s:Body></s:Envelope>`,
			soap11Env, n+1)
	case call.XMLName.Local == "Boom12":
		soapFault(w, soap12Env, "kaput")
	default:
		soapFault(w, soap11Env, "kaput: "+call.XMLName.Local)
	}
}

func soapFault(w http.ResponseWriter, ns, reason string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(http.StatusInternalServerError)
	if ns == soap12Env {
		fmt.Fprintf(w, `<env:Envelope xmlns:env="%s"><env:Body><env:Fault><env:Code><env:Value>env:Receiver</env:Value></env:Code>`+
			`<env:Reason><env:Text xml:lang="en">%s</env:Text></env:Reason></env:Fault></env:Body></env:Envelope>`, ns, reason)
		return
	}
	fmt.Fprintf(w, `<soap:Envelope xmlns:soap="%s"><soap:Body><soap:Fault><faultcode>soap:Server</faultcode>`+
		`<faultstring>%s</faultstring></soap:Fault></soap:Body></soap:Envelope>`, ns, reason)
}

func serverTarget(t *testing.T, s *httptest.Server) netip.AddrPort {
	t.Helper()
	t.Cleanup(s.Close)
	return netip.MustParseAddrPort(s.Listener.Addr().String())
}

func TestProbeSOAP(t *testing.T) {
	plain := serverTarget(t, httptest.NewServer(http.HandlerFunc(calcService)))
	secure := serverTarget(t, httptest.NewTLSServer(http.HandlerFunc(calcService)))
	inc := func(path string, ret string) *SOAPCheck {
		return &SOAPCheck{URLPath: path, Namespace: "urn:calc", Method: "Inc", ParamName: "n", ParamType: "int", ParamValue: "41",
			ReturnType: "int", ReturnValue: ret}
	}
	with := func(c *SOAPCheck, f func(*SOAPCheck)) *SOAPCheck { f(c); return c }
	for _, c := range []struct {
		name     string
		check    *SOAPCheck
		target   netip.AddrPort
		deadline time.Duration
		up       bool
		errSub   string
		errIs    error
	}{
		{name: "returns the value", check: inc("/calc", "42"), up: true},
		{name: "returns it as a long too", check: with(inc("/calc", "0042"), func(c *SOAPCheck) { c.ReturnType = "long" }), up: true},
		{name: "returns another value", check: inc("/calc", "43"), errSub: `Return value "42" is not "43"`},
		{name: "not a bool", check: with(inc("/calc", "true"), func(c *SOAPCheck) { c.ReturnType = "bool" }),
			errSub: `Return value: "42" is not a bool`},
		{name: "any answer without a return value", check: inc("/calc", ""), up: true},
		{name: "over https", check: with(inc("/calc", "42"), func(c *SOAPCheck) { c.HTTPS = true }), target: secure, up: true},
		{name: "a fault is down", check: &SOAPCheck{URLPath: "/calc", Namespace: "urn:calc", Method: "Boom"}, errSub: "SOAP fault: kaput: Boom"},
		{name: "a fault expected", check: &SOAPCheck{URLPath: "/calc", Namespace: "urn:calc", Method: "Boom", ExpectFault: true}, up: true},
		{name: "a SOAP 1.2 fault expected", check: &SOAPCheck{URLPath: "/calc", Method: "Boom12", ExpectFault: true}, up: true},
		{name: "no fault when one is expected", check: with(inc("/calc", ""), func(c *SOAPCheck) { c.ExpectFault = true }), errIs: ErrNoFault},
		{name: "SOAPAction sent", check: with(inc("/action", "42"), func(c *SOAPCheck) { c.SOAPAction = "urn:calc#Inc" }), up: true},
		{name: "SOAPAction empty", check: inc("/action", "42"), errSub: `SOAP fault: no such action ""`},
		{name: "basic authentication", check: with(inc("/secure", "42"), func(c *SOAPCheck) { c.Username, c.Password = "mon", "pw" }), up: true},
		{name: "no authentication", check: inc("/secure", "42"), errSub: "HTTP status 401"},
		{name: "a web page", check: inc("/html", "42"), errIs: errNotSOAP},
		{name: "not found", check: inc("/nowhere", "42"), errSub: "HTTP status 404"},
		{name: "silent", check: inc("/slow", "42"), deadline: 300 * time.Millisecond, errIs: ErrNoResponse},
		{name: "refused", check: inc("/calc", "42"), target: closedPort(t, "127.0.0.1:0"), errSub: "Unable to connect"},
	} {
		t.Run(c.name, func(t *testing.T) {
			target, d := c.target, c.deadline
			if !target.IsValid() {
				target = plain
			}
			if d == 0 {
				d = 5 * time.Second
			}
			o, err := probe(t, &Spec{Type: SOAP, SOAP: c.check}, target, d)
			wantVerdict(t, o, err, c.up, c.errSub, c.errIs)
		})
	}
}

func TestSOAPCheckAndValues(t *testing.T) {
	for _, c := range []struct {
		check *SOAPCheck
		err   string
	}{
		{nil, "needs method"},
		{&SOAPCheck{Method: "Get Status"}, `method "Get Status" is not an XML element name`},
		{&SOAPCheck{Method: "Get", URLPath: "svc"}, "does not start with /"},
		{&SOAPCheck{Method: "Get", SOAPAction: "a\r\nX-Evil: 1"}, "soap-action must not contain a line break"},
		{&SOAPCheck{Method: "Get", ParamName: "n", ParamType: "float"}, `parameter-type "float" is not one of bool, int, long, string`},
		{&SOAPCheck{Method: "Get", ParamName: "n", ParamType: "int", ParamValue: "x"}, `parameter-value: "x" is not an int`},
		{&SOAPCheck{Method: "Get", ReturnType: "short", ReturnValue: "70000"}, `return-value: "70000" is not a short`},
		{&SOAPCheck{Method: "Get", ReturnType: "tuple"}, "return-type"},
		{&SOAPCheck{Method: "Get", ParamName: "flag"}, `parameter-value: "" is not a bool`},
		{&SOAPCheck{Method: "Get", ParamName: "flag", ParamValue: "true", ReturnType: "double", ReturnValue: "2.5"}, ""},
	} {
		err := c.check.check()
		if (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: check() = %v, want %q", c.check, err, c.err)
		}
	}
	for _, c := range []struct{ typ, a, b string }{
		{"bool", "1", "TRUE"}, {"bool", "false", "0"}, {"int", "007", "7"}, {"double", "2.50", "2.5"},
		{"char", "A", "65"}, {"string", "x", "x"},
	} {
		a, err1 := soapValue(c.typ, c.a)
		b, err2 := soapValue(c.typ, c.b)
		if err1 != nil || err2 != nil || a != b {
			t.Errorf("%s: %q and %q: %q %v, %q %v; want equal", c.typ, c.a, c.b, a, err1, b, err2)
		}
	}
	env := string(soapEnvelope(&SOAPCheck{Method: "Get", Namespace: `urn:a&b`, ParamName: "q", ParamType: "string", ParamValue: "<x>"}))
	if !strings.Contains(env, `<Get xmlns="urn:a&amp;b"><q xsi:type="xsd:string">&lt;x&gt;</q></Get>`) {
		t.Errorf("envelope %s", env)
	}
}
