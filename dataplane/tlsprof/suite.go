package tlsprof

import (
	"crypto/tls"
	"strings"
)

// SuiteName is a negotiated suite's name as BIG-IP's SSL::cipher name
// gives it: the OpenSSL name (ECDHE-RSA-AES128-GCM-SHA256), or the IANA
// name of a TLS 1.3 suite (TLS_AES_128_GCM_SHA256).
func SuiteName(id uint16) string {
	for i := range suites {
		if suites[i].id == id && id != 0 {
			return suites[i].name
		}
	}
	return tls.CipherSuiteName(id)
}

// SuiteBits is the symmetric key length of a negotiated suite (SSL::cipher
// bits); 0 when unknown.
func SuiteBits(id uint16) int {
	name := tls.CipherSuiteName(id)
	switch {
	case strings.Contains(name, "AES_128"):
		return 128
	case strings.Contains(name, "AES_256"), strings.Contains(name, "CHACHA20"):
		return 256
	case strings.Contains(name, "3DES"):
		return 168
	case strings.Contains(name, "RC4_128"):
		return 128
	}
	return 0
}
