package monitor

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The SOAP envelope namespaces: 1.1, which the probe sends, and 1.2,
// which it also reads, so a service answering in either is understood.
const (
	soap11Env = "http://schemas.xmlsoap.org/soap/envelope/"
	soap12Env = "http://www.w3.org/2003/05/soap-envelope"
)

// The parameter and return types BIG-IP's soap monitor names (tmsh:
// parameter-type bool, int, long; return-type bool, char, double, int,
// long, short; its REST reference adds string to both).
var (
	soapParamTypes  = []string{"bool", "int", "long", "string"}
	soapReturnTypes = []string{"bool", "char", "double", "int", "long", "short", "string"}
)

// soapEnvelope is the request: a SOAP 1.1 envelope whose body calls
// c.Method. Choices [M]: the method element carries c.Namespace as its
// default namespace, so the parameter element is in it too, as
// document/literal services (the .NET and JAX-WS default) expect; the
// parameter also names its XML Schema type (xsi:type), which rpc/encoded
// services read and literal ones ignore.
func soapEnvelope(c *SOAPCheck) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	b.WriteString(`<soap:Envelope xmlns:soap="` + soap11Env + `" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">`)
	b.WriteString(`<soap:Body><` + c.Method)
	if c.Namespace != "" {
		b.WriteString(` xmlns="`)
		xml.EscapeText(&b, []byte(c.Namespace))
		b.WriteString(`"`)
	}
	b.WriteString(`>`)
	if c.ParamName != "" {
		b.WriteString(`<` + c.ParamName + ` xsi:type="xsd:` + xsdType(c.ParamType) + `">`)
		xml.EscapeText(&b, []byte(c.ParamValue))
		b.WriteString(`</` + c.ParamName + `>`)
	}
	b.WriteString(`</` + c.Method + `></soap:Body></soap:Envelope>`)
	return b.Bytes()
}

// xsdType is the XML Schema type of a soap monitor type name.
func xsdType(t string) string {
	switch t {
	case "", "bool":
		return "boolean"
	case "char":
		return "string"
	}
	return t
}

// xmlNode is any element of a SOAP answer, read whole; maxReply bounds
// how much there is to read.
type xmlNode struct {
	XMLName xml.Name
	Content string    `xml:",chardata"`
	Nodes   []xmlNode `xml:",any"`
}

func (n *xmlNode) child(local string) *xmlNode {
	for i := range n.Nodes {
		if n.Nodes[i].XMLName.Local == local {
			return &n.Nodes[i]
		}
	}
	return nil
}

// soapAnswer is what a SOAP response says: a fault (with its reason), or
// the call's return value.
type soapAnswer struct {
	fault  bool
	reason string // the fault's faultstring (1.1) or Reason Text (1.2)
	value  string // the return value: the text of the response element's first child [M]
}

var errNotSOAP = errors.New("Response is not a SOAP envelope")

// readSOAP reads a SOAP 1.1 or 1.2 envelope. The return value is the text
// of the first element inside the body's response element (the
// <MethodResult> or <return> services wrap it in), or the response
// element's own text when it has no child [M].
func readSOAP(body []byte) (soapAnswer, error) {
	var env xmlNode
	if err := xml.Unmarshal(body, &env); err != nil {
		return soapAnswer{}, errNotSOAP
	}
	ns := env.XMLName.Space
	if env.XMLName.Local != "Envelope" || (ns != soap11Env && ns != soap12Env) {
		return soapAnswer{}, errNotSOAP
	}
	b := env.child("Body")
	if b == nil || b.XMLName.Space != ns {
		return soapAnswer{}, errNotSOAP
	}
	if len(b.Nodes) == 0 {
		return soapAnswer{}, nil
	}
	r := &b.Nodes[0]
	if r.XMLName.Local == "Fault" && r.XMLName.Space == ns {
		a := soapAnswer{fault: true}
		if s := r.child("faultstring"); s != nil {
			a.reason = s.Content
		} else if s := r.child("Reason"); s != nil {
			if t := s.child("Text"); t != nil {
				a.reason = t.Content
			}
		}
		a.reason = strings.TrimSpace(a.reason)
		return a, nil
	}
	if len(r.Nodes) > 0 {
		r = &r.Nodes[0]
	}
	return soapAnswer{value: strings.TrimSpace(r.Content)}, nil
}

// soapValue reads s as a value of type t, in a form two values of the
// type compare equal in: xsd:boolean's 1 is true, 07 is the int 7.
// char is one character, or its code as a number (how .NET writes a
// char) [M].
func soapValue(t, s string) (string, error) {
	bits := map[string]int{"short": 16, "int": 32, "long": 64}
	switch t {
	case "", "bool":
		switch strings.ToLower(s) {
		case "true", "1":
			return "true", nil
		case "false", "0":
			return "false", nil
		}
		return "", fmt.Errorf("%q is not a bool (true, false, 1 or 0)", s)
	case "short", "int", "long":
		n, err := strconv.ParseInt(s, 10, bits[t])
		if err != nil {
			article := map[string]string{"short": "a", "int": "an", "long": "a"}[t]
			return "", fmt.Errorf("%q is not %s %s (%d-bit integer)", s, article, t, bits[t])
		}
		return strconv.FormatInt(n, 10), nil
	case "double":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return "", fmt.Errorf("%q is not a double", s)
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	case "char":
		if r, size := utf8.DecodeRuneInString(s); size > 0 && size == len(s) {
			return strconv.Itoa(int(r)), nil
		}
		if n, err := strconv.ParseUint(s, 10, 16); err == nil {
			return strconv.FormatUint(n, 10), nil
		}
		return "", fmt.Errorf("%q is not a char (one character, or its code)", s)
	case "string":
		return s, nil
	}
	return "", fmt.Errorf("unknown type %q", t)
}

// xmlName reports whether s can name an XML element without a prefix.
func xmlName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r > 0x7f && r != 0xfffd:
		case i > 0 && (r == '-' || r == '.' || r >= '0' && r <= '9'):
		default:
			return false
		}
	}
	return !strings.HasPrefix(strings.ToLower(s), "xml")
}
