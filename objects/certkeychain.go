package objects

import (
	"github.com/openltm/openltm/grammar"
)

// certKeyChainProp is the ssl profiles' block of certificate, key and
// chain entries. BIG-IP keeps each entry's files as references (a key a
// profile uses cannot be deleted, a profile naming a missing certificate
// is refused), so the block's names are references here too, although the
// block itself is kept as written.
const certKeyChainProp = "cert-key-chain"

var (
	specSSLCert = []string{"sys file ssl-cert"}
	specSSLKey  = []string{"sys file ssl-key"}
	// specOCSPParams is what an entry's ocsp-stapling-params names
	// (BIG-IP 11.6 to 13.0; kinds_tlsold.go).
	specOCSPParams = []string{ocspParamsKey}
)

// certKeyChainRefs reads `{ name { cert C key K chain H ... } ... }` and
// returns its cert and chain as certificate references and its key as a
// key reference, as written (relative names are made full by Refs). A
// block that does not read is left for the TLS translation to refuse.
func certKeyChainRefs(raw string) []Ref {
	f, err := grammar.Parse(certKeyChainProp, []byte("x "+raw))
	if err != nil || len(f.Statements) != 1 || len(f.Statements[0].Items) != 2 {
		return nil
	}
	b, ok := f.Statements[0].Items[1].(*grammar.Block)
	if !ok {
		return nil
	}
	var out []Ref
	for _, it := range b.Items {
		body, ok := it.(*grammar.Block)
		if !ok {
			continue
		}
		ws := grammar.Texts(body.Items)
		for j := 0; j+1 < len(ws); j += 2 {
			v := ws[j+1]
			if v == "" || v == "none" {
				continue
			}
			switch ws[j] {
			case "cert", "chain":
				out = append(out, Ref{specSSLCert, v, certKeyChainProp})
			case "key":
				out = append(out, Ref{specSSLKey, v, certKeyChainProp})
			case "ocsp-stapling-params":
				out = append(out, Ref{specOCSPParams, v, certKeyChainProp})
			}
		}
	}
	return out
}
