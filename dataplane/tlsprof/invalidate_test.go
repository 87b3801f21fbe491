package tlsprof

import (
	"crypto/tls"
	"testing"
)

// TestOffersSecureRenegotiation: RFC 5746's signal is either the
// renegotiation_info extension or the signalling suite.
func TestOffersSecureRenegotiation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		suites []uint16
		exts   []uint16
		want   bool
	}{
		{"extension", []uint16{tls.TLS_AES_128_GCM_SHA256}, []uint16{0, 0xff01, 43}, true},
		{"scsv", []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, 0x00ff}, []uint16{0}, true},
		{"neither", []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}, []uint16{0, 10, 11}, false},
		{"empty", nil, nil, false},
	} {
		if got := OffersSecureRenegotiation(&tls.ClientHelloInfo{CipherSuites: tc.suites, Extensions: tc.exts}); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
