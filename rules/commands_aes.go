package rules

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// The AES:: commands are BIG-IP's older, self-contained encryption:
// rules make a key with AES::key, keep it in a static or a data group,
// and encrypt a cookie or a token that only they read back
// (`b64encode [AES::encrypt $key $value]`, then `AES::decrypt $key
// [b64decode $cookie]`). What F5 shows (DevCentral threads "AES
// functions", "AES encrypt - Does it need ONLY alphanumeric value", and
// the codeshare "encrypted cookie generation and decryption"): a key is
// the text "AES <bits> <hex>", a list of three words, with 32, 48 or 64
// hex digits for 128, 192 or 256 bits, and rules store it as that text;
// a key not of that form is a Tcl error ("invalid AES key"); the same
// data encrypts differently each time. F5 does not publish the layout
// of its ciphertext, so openltm's cannot be read by a BIG-IP nor
// BIG-IP's by openltm: only what one openltm encrypted decrypts, which
// is all these commands are used for.
//
// Chosen where F5's pages are silent [M]: the first byte of a
// ciphertext is its format, 1 or 2, so that AES::decrypt without an
// option reads either and a rule that encrypts with -v1 still decrypts
// without it; -v1 and -v2 on AES::decrypt accept that format alone.
// Format 1 (-v1) is a random 16-byte IV and AES-CBC with PKCS#7
// padding, which carries no integrity check: a wrong key or altered
// data is refused only when the padding comes out wrong, and otherwise
// decrypts to garbage. Format 2 (-v2, the default, since a cookie comes
// back from the client and may have been altered) is a random 12-byte
// nonce and AES-GCM with the format byte as additional data, whose
// 16-byte tag refuses any wrong key or altered byte. AES::decrypt
// returns the empty string for data it cannot decrypt, so that a rule
// tests the result with `eq ""` as published rules do after
// `HTTP::cookie decrypt`; an empty plaintext and a failure look the
// same. AES::key with no length
// makes 128 bits and writes its hex in lower case; keys are read in
// either case. Data is Tcl's byte form of the value (the low byte of
// each character), as for every other digest and cipher command.

// AES ciphertext formats: the first byte of every ciphertext.
const (
	aesFormatCBC byte = 1 // -v1
	aesFormatGCM byte = 2 // -v2
)

// aesNonceSize is AES-GCM's standard nonce length.
const aesNonceSize = 12

// aesKeyBytes maps F5's key sizes, as AES::key and keys spell them, to
// the key's length in bytes.
var aesKeyBytes = map[string]int{"128": 16, "192": 24, "256": 32}

// registerAES adds AES::key, AES::encrypt and AES::decrypt.
func registerAES(t *tcl.Commands) {
	t.Register("AES::key", cmdAESKey)
	t.Register("AES::encrypt", cmdAESEncrypt)
	t.Register("AES::decrypt", cmdAESDecrypt)
}

func cmdAESKey(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	bits := "128"
	switch len(args) {
	case 1:
	case 2:
		bits = args[1].String()
	default:
		return tcl.Empty, tcl.WrongArgs("AES::key ?128|192|256?")
	}
	n, ok := aesKeyBytes[bits]
	if !ok {
		return tcl.Empty, tcl.Errorf("AES::key: bad key length %q: must be 128, 192 or 256", bits)
	}
	key := make([]byte, n)
	rand.Read(key)
	return tcl.Str("AES " + bits + " " + hex.EncodeToString(key)), nil
}

// parseAESKey reads a key in F5's text form. The error does not repeat
// the key: rules log their errors, and a mistyped key is still mostly
// a secret.
func parseAESKey(cmd string, v tcl.Value) ([]byte, error) {
	f := strings.Fields(v.String())
	if len(f) == 3 && f[0] == "AES" {
		if n, ok := aesKeyBytes[f[1]]; ok && len(f[2]) == 2*n {
			if key, err := hex.DecodeString(f[2]); err == nil {
				return key, nil
			}
		}
	}
	return nil, tcl.Errorf(`%s: invalid AES key: want "AES 128|192|256 HEX" with 32, 48 or 64 hex digits as the size says (AES::key makes one)`, cmd)
}

// aesArgs parses `?-v1|-v2? key data`; format is 0 when no option is
// given. An option is only read with three words after the command, so
// data that starts with a dash needs none.
func aesArgs(cmd string, args []tcl.Value) (format byte, key, data []byte, err error) {
	switch len(args) {
	case 3:
	case 4:
		switch opt := args[1].String(); opt {
		case "-v1":
			format = aesFormatCBC
		case "-v2":
			format = aesFormatGCM
		default:
			return 0, nil, nil, tcl.Errorf("%s: bad option %q: must be -v1 or -v2", cmd, opt)
		}
	default:
		return 0, nil, nil, tcl.WrongArgs(cmd + " ?-v1|-v2? key data")
	}
	key, err = parseAESKey(cmd, args[len(args)-2])
	if err != nil {
		return 0, nil, nil, err
	}
	return format, key, tcl.BytesOf(args[len(args)-1]), nil
}

func cmdAESEncrypt(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	format, key, data, err := aesArgs("AES::encrypt", args)
	if err != nil {
		return tcl.Empty, err
	}
	if format == 0 {
		format = aesFormatGCM
	}
	ivLen := aes.BlockSize
	if format == aesFormatGCM {
		ivLen = aesNonceSize
	}
	iv := make([]byte, ivLen)
	rand.Read(iv)
	out, err := aesSeal(format, key, iv, data)
	if err != nil {
		return tcl.Empty, tcl.Errorf("AES::encrypt: %v", err)
	}
	return tcl.Bytes(out), nil
}

func cmdAESDecrypt(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	format, key, data, err := aesArgs("AES::decrypt", args)
	if err != nil {
		return tcl.Empty, err
	}
	out, ok := aesOpen(format, key, data)
	if !ok {
		return tcl.Empty, nil
	}
	return tcl.Bytes(out), nil
}

// aesSeal encrypts data in the given format with the IV (format 1, 16
// bytes) or nonce (format 2, 12 bytes) it is handed; the key has been
// parsed, so the errors are not expected.
func aesSeal(format byte, key, iv, data []byte) ([]byte, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	out := append([]byte{format}, iv...)
	if format == aesFormatGCM {
		gcm, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		return gcm.Seal(out, iv, data, out[:1]), nil
	}
	pad := aes.BlockSize - len(data)%aes.BlockSize
	body := make([]byte, len(data)+pad)
	copy(body, data)
	for i := len(data); i < len(body); i++ {
		body[i] = byte(pad)
	}
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(body, body)
	return append(out, body...), nil
}

// aesOpen decrypts what aesSeal made; format 0 takes either format.
// It reports false for anything it cannot decrypt: too short, not whole
// blocks, another format, a failed tag or bad padding.
func aesOpen(format byte, key, data []byte) ([]byte, bool) {
	if len(data) == 0 || (format != 0 && data[0] != format) {
		return nil, false
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, false
	}
	switch data[0] {
	case aesFormatGCM:
		gcm, err := cipher.NewGCM(block)
		if err != nil || len(data) < 1+aesNonceSize+gcm.Overhead() {
			return nil, false
		}
		out, err := gcm.Open(nil, data[1:1+aesNonceSize], data[1+aesNonceSize:], data[:1])
		return out, err == nil
	case aesFormatCBC:
		body := data[1:]
		if len(body) < 2*aes.BlockSize || len(body)%aes.BlockSize != 0 {
			return nil, false
		}
		out := make([]byte, len(body)-aes.BlockSize)
		cipher.NewCBCDecrypter(block, body[:aes.BlockSize]).CryptBlocks(out, body[aes.BlockSize:])
		pad := int(out[len(out)-1])
		if pad == 0 || pad > aes.BlockSize {
			return nil, false
		}
		// Every padding byte is checked, not only the first wrong one,
		// so that the time taken says little about where it went wrong.
		bad := byte(0)
		for _, b := range out[len(out)-pad:] {
			bad |= b ^ byte(pad)
		}
		if bad != 0 {
			return nil, false
		}
		return out[:len(out)-pad], true
	}
	return nil, false
}
