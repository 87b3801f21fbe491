package tlsprof

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
)

// Signed OCSP requests (RFC 6960 4.1): golang.org/x/crypto/ocsp makes
// unsigned ones only, so the request it makes is taken apart and
// rebuilt with the requestor's name (the signer certificate's subject)
// and a signature over the TBSRequest, the signer's certificate with it.

var (
	oidECDSAWithSHA256 = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
	oidSHA256WithRSA   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 11}
	oidEd25519         = asn1.ObjectIdentifier{1, 3, 101, 112}
)

// signRequest signs req, an unsigned OCSPRequest, as cert with key.
func signRequest(req []byte, cert *x509.Certificate, key crypto.Signer) ([]byte, error) {
	var outer asn1.RawValue
	if rest, err := asn1.Unmarshal(req, &outer); err != nil || len(rest) > 0 {
		return nil, errors.New("the OCSP request is not one DER sequence")
	}
	var tbs asn1.RawValue
	if _, err := asn1.Unmarshal(outer.Bytes, &tbs); err != nil || tbs.Tag != asn1.TagSequence {
		return nil, errors.New("the OCSP request has no TBSRequest")
	}
	// requestorName [1] EXPLICIT GeneralName: directoryName [4] EXPLICIT Name.
	dn, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 4, IsCompound: true, Bytes: cert.RawSubject})
	if err != nil {
		return nil, err
	}
	name, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 1, IsCompound: true, Bytes: dn})
	if err != nil {
		return nil, err
	}
	// x/crypto/ocsp writes no version (v1, the default): the name comes
	// first, before the request list.
	signedTBS, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSequence, IsCompound: true,
		Bytes: append(name, tbs.Bytes...)})
	if err != nil {
		return nil, err
	}
	var alg asn1.ObjectIdentifier
	var sig []byte
	switch key.Public().(type) {
	case *ecdsa.PublicKey:
		h := sha256.Sum256(signedTBS)
		alg = oidECDSAWithSHA256
		sig, err = key.Sign(rand.Reader, h[:], crypto.SHA256)
	case *rsa.PublicKey:
		h := sha256.Sum256(signedTBS)
		alg = oidSHA256WithRSA
		sig, err = key.Sign(rand.Reader, h[:], crypto.SHA256)
	case ed25519.PublicKey:
		alg = oidEd25519
		sig, err = key.Sign(rand.Reader, signedTBS, crypto.Hash(0))
	default:
		return nil, fmt.Errorf("signer-key: a %T key cannot sign OCSP requests", key.Public())
	}
	if err != nil {
		return nil, fmt.Errorf("signer-key: %v", err)
	}
	var algDER []byte
	if alg.Equal(oidSHA256WithRSA) {
		// RSA's AlgorithmIdentifier carries NULL parameters.
		algDER, err = asn1.Marshal(struct {
			Algorithm  asn1.ObjectIdentifier
			Parameters asn1.RawValue
		}{alg, asn1.NullRawValue})
	} else {
		algDER, err = asn1.Marshal(struct{ Algorithm asn1.ObjectIdentifier }{alg})
	}
	if err != nil {
		return nil, err
	}
	bits, err := asn1.Marshal(asn1.BitString{Bytes: sig, BitLength: 8 * len(sig)})
	if err != nil {
		return nil, err
	}
	certSeq, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSequence, IsCompound: true, Bytes: cert.Raw})
	if err != nil {
		return nil, err
	}
	certs, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: certSeq})
	if err != nil {
		return nil, err
	}
	body := append(append(algDER, bits...), certs...)
	signature, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSequence, IsCompound: true, Bytes: body})
	if err != nil {
		return nil, err
	}
	optional, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: signature})
	if err != nil {
		return nil, err
	}
	return asn1.Marshal(asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSequence, IsCompound: true,
		Bytes: append(signedTBS, optional...)})
}
