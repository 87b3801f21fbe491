package rules

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"
	"slices"
	"strings"

	//lint:ignore SA1019 BIG-IP's CRYPTO::hash and rmd160 offer RIPEMD-160; rules written for it must get the same digest
	"golang.org/x/crypto/ripemd160"

	"github.com/openltm/openltm/rules/tcl"
)

// The CRYPTO:: commands are BIG-IP's (clouddocs "CRYPTO::hash",
// "CRYPTO::sign", "CRYPTO::verify", "CRYPTO::encrypt", "CRYPTO::decrypt",
// "CRYPTO::keygen"): rules hash request parts for routing and tokens,
// sign and check cookies with HMACs, and encrypt values with AES so that
// a server or a browser cannot read them; what they produce must be what
// any other implementation of the same algorithm produces, since the
// other end is often not a BIG-IP. Chosen where F5's pages are silent
// [M]: -alg is required (no default algorithm); AES takes an IV of one
// block and pads with PKCS#7; in -ctx mode encrypt and decrypt return
// nothing until -final, which returns the whole output, so that the
// concatenation of a context's results is the one-shot result.

// cryptoHashes are the digests CRYPTO::hash computes and, as hmac-NAME,
// CRYPTO::sign and CRYPTO::verify key.
var cryptoHashes = map[string]func() hash.Hash{
	"md5":       md5.New,
	"ripemd160": ripemd160.New,
	"sha1":      sha1.New,
	"sha224":    sha256.New224,
	"sha256":    sha256.New,
	"sha384":    sha512.New384,
	"sha512":    sha512.New,
}

// cryptoCiphers are the block ciphers of CRYPTO::encrypt and decrypt, by
// key length in bytes.
var cryptoCiphers = map[string]int{"aes-128-cbc": 16, "aes-192-cbc": 24, "aes-256-cbc": 32}

// cryptoNotRun are F5's algorithms openltm does not compute: a rule that
// names one is kept and its virtual servers carry no traffic.
var cryptoNotRun = map[string][]string{
	"CRYPTO::encrypt": {"rsa-pub", "rsa-priv"},
	"CRYPTO::decrypt": {"rsa-pub", "rsa-priv"},
	"CRYPTO::keygen":  {"rsa"},
}

// cryptoOpts are each command's options; true where the option takes a
// value.
var cryptoOpts = map[string]map[string]bool{
	"CRYPTO::hash":    {"-alg": true, "-ctx": true, "-final": false},
	"CRYPTO::sign":    {"-alg": true, "-ctx": true, "-final": false, "-key": true, "-keyhex": true},
	"CRYPTO::verify":  {"-alg": true, "-ctx": true, "-final": false, "-key": true, "-keyhex": true, "-signature": true},
	"CRYPTO::encrypt": {"-alg": true, "-ctx": true, "-final": false, "-key": true, "-keyhex": true, "-iv": true, "-ivhex": true, "-padding": true},
	"CRYPTO::decrypt": {"-alg": true, "-ctx": true, "-final": false, "-key": true, "-keyhex": true, "-iv": true, "-ivhex": true, "-padding": true},
	"CRYPTO::keygen":  {"-alg": true, "-len": true, "-exp": true, "-passphrase": true, "-salt": true, "-salthex": true, "-rounds": true},
}

// cryptoUsage is each command's synopsis as F5 writes it.
var cryptoUsage = map[string]string{
	"CRYPTO::hash":    "CRYPTO::hash [-alg <alg>] [-ctx <ctx> [-final]] [<data>]",
	"CRYPTO::sign":    "CRYPTO::sign [-alg <alg>] [-ctx <ctx> [-final]] [-key[hex] <key>] [<data>]",
	"CRYPTO::verify":  "CRYPTO::verify [-alg <alg>] [-ctx <ctx> [-final]] [-key[hex] <key>] [-signature <sig>] [<data>]",
	"CRYPTO::encrypt": "CRYPTO::encrypt [-alg <alg>] [-ctx <ctx> [-final]] [-key[hex] <key>] [-iv[hex] <iv>] [<data>]",
	"CRYPTO::decrypt": "CRYPTO::decrypt [-alg <alg>] [-ctx <ctx> [-final]] [-key[hex] <key>] [-iv[hex] <iv>] [<data>]",
	"CRYPTO::keygen":  "CRYPTO::keygen -alg random|pbkdf2-md5 -len <bits> [-passphrase <p> -salt[hex] <s> -rounds <n>]",
}

// cryptoArgs is one CRYPTO:: command's words, parsed.
type cryptoArgs struct {
	opts map[string]tcl.Value
	data []byte
	has  bool // data was given
}

func (a *cryptoArgs) str(name string) (string, bool) {
	v, ok := a.opts[name]
	return v.String(), ok
}

// bytes reads an option given raw (name) or as hex (name+"hex").
func (a *cryptoArgs) bytes(cmd, name string) ([]byte, bool, error) {
	if v, ok := a.opts[name]; ok {
		return tcl.BytesOf(v), true, nil
	}
	v, ok := a.opts[name+"hex"]
	if !ok {
		return nil, false, nil
	}
	b, err := hex.DecodeString(v.String())
	if err != nil {
		return nil, false, tcl.Errorf("%s: %shex %q is not hexadecimal", cmd, name, v.String())
	}
	return b, true, nil
}

func parseCryptoArgs(cmd string, args []tcl.Value) (*cryptoArgs, error) {
	known := cryptoOpts[cmd]
	a := &cryptoArgs{opts: map[string]tcl.Value{}}
	for i := 1; i < len(args); i++ {
		w := args[i].String()
		takes, isOpt := known[w]
		switch {
		case isOpt && !takes:
			a.opts[w] = tcl.Empty
		case isOpt && i+1 < len(args):
			a.opts[w] = args[i+1]
			i++
		case isOpt || a.has:
			return nil, tcl.WrongArgs(cryptoUsage[cmd])
		default:
			a.data, a.has = tcl.BytesOf(args[i]), true
		}
	}
	return a, nil
}

// cryptoCtx is a -ctx context: the operation it belongs to and its state
// between the calls that feed it.
type cryptoCtx struct {
	cmd  string
	alg  string
	h    hash.Hash // hash, sign, verify
	key  []byte
	iv   []byte
	sig  []byte
	buf  []byte // encrypt, decrypt: the input so far
	data bool   // data has been given: key and IV are fixed
}

// context finds or starts the named context of s for cmd.
func (s *ConnState) cryptoContext(cmd, name string) (*cryptoCtx, error) {
	if c, ok := s.crypto[name]; ok {
		if c.cmd != cmd {
			return nil, tcl.Errorf("%s: context %q belongs to %s until its -final", cmd, name, c.cmd)
		}
		return c, nil
	}
	if s.crypto == nil {
		s.crypto = map[string]*cryptoCtx{}
	}
	c := &cryptoCtx{cmd: cmd}
	s.crypto[name] = c
	return c, nil
}

// setup takes the algorithm, key, IV and signature a call gives its
// context; F5 lets them change only before the first data.
func (c *cryptoCtx) setup(cmd string, a *cryptoArgs) error {
	if alg, ok := a.str("-alg"); ok {
		if c.alg != "" && alg != c.alg {
			return tcl.Errorf("%s: the context's algorithm is %s and cannot change", cmd, c.alg)
		}
		c.alg = alg
	}
	if c.alg == "" {
		return tcl.Errorf("%s: -alg is required", cmd)
	}
	for _, f := range []struct {
		name string
		dst  *[]byte
	}{{"-key", &c.key}, {"-iv", &c.iv}} {
		b, ok, err := a.bytes(cmd, f.name)
		if err != nil {
			return err
		}
		if ok {
			if c.data {
				return tcl.Errorf("%s: %s cannot change once data has been given", cmd, f.name)
			}
			*f.dst = b
		}
	}
	if v, ok := a.opts["-signature"]; ok {
		c.sig = tcl.BytesOf(v)
	}
	return nil
}

// start makes the context's hash once its algorithm and key are known.
func (c *cryptoCtx) start(cmd string) error {
	if c.h != nil {
		return nil
	}
	switch cmd {
	case "CRYPTO::hash":
		nh, ok := cryptoHashes[c.alg]
		if !ok {
			return badCryptoAlg(cmd, c.alg, hashNames(""))
		}
		c.h = nh()
	case "CRYPTO::sign", "CRYPTO::verify":
		nh, ok := cryptoHashes[strings.TrimPrefix(c.alg, "hmac-")]
		if !ok || !strings.HasPrefix(c.alg, "hmac-") {
			return badCryptoAlg(cmd, c.alg, hashNames("hmac-"))
		}
		if c.key == nil {
			return tcl.Errorf("%s: -key or -keyhex is required", cmd)
		}
		c.h = hmac.New(nh, c.key)
	}
	return nil
}

func hashNames(prefix string) []string {
	var ns []string
	for n := range cryptoHashes {
		ns = append(ns, prefix+n)
	}
	slices.Sort(ns)
	return ns
}

func badCryptoAlg(cmd, alg string, valid []string) error {
	return tcl.Errorf("%s: unknown algorithm %q; valid: %s", cmd, alg, strings.Join(valid, " "))
}

// run feeds data to the context and, at final, returns its result.
func (c *cryptoCtx) run(cmd string, data []byte, final bool) (tcl.Value, error) {
	if err := c.start(cmd); err != nil {
		return tcl.Empty, err
	}
	c.data = c.data || len(data) > 0
	switch cmd {
	case "CRYPTO::hash", "CRYPTO::sign", "CRYPTO::verify":
		c.h.Write(data)
		if !final {
			return tcl.Empty, nil
		}
		sum := c.h.Sum(nil)
		if cmd == "CRYPTO::verify" {
			if c.sig == nil {
				return tcl.Empty, tcl.Errorf("%s: -signature is required", cmd)
			}
			return tcl.Bool(hmac.Equal(sum, c.sig)), nil
		}
		return tcl.Bytes(sum), nil
	}
	c.buf = append(c.buf, data...)
	if !final {
		return tcl.Empty, nil
	}
	out, err := aesCBC(cmd, c.alg, c.key, c.iv, c.buf)
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Bytes(out), nil
}

// aesCBC encrypts or decrypts in with PKCS#7 padding.
func aesCBC(cmd, alg string, key, iv, in []byte) ([]byte, error) {
	keyLen, ok := cryptoCiphers[alg]
	if !ok {
		var ns []string
		for n := range cryptoCiphers {
			ns = append(ns, n)
		}
		slices.Sort(ns)
		return nil, badCryptoAlg(cmd, alg, ns)
	}
	if len(key) != keyLen {
		return nil, tcl.Errorf("%s: %s takes a key of %d bytes, not %d", cmd, alg, keyLen, len(key))
	}
	if len(iv) != aes.BlockSize {
		return nil, tcl.Errorf("%s: %s takes an IV of %d bytes (-iv or -ivhex), not %d", cmd, alg, aes.BlockSize, len(iv))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, tcl.Errorf("%s: %v", cmd, err)
	}
	if cmd == "CRYPTO::encrypt" {
		pad := aes.BlockSize - len(in)%aes.BlockSize
		out := make([]byte, len(in)+pad)
		copy(out, in)
		for i := len(in); i < len(out); i++ {
			out[i] = byte(pad)
		}
		cipher.NewCBCEncrypter(block, iv).CryptBlocks(out, out)
		return out, nil
	}
	if len(in) == 0 || len(in)%aes.BlockSize != 0 {
		return nil, tcl.Errorf("%s: the data is not a whole number of %d-byte blocks", cmd, aes.BlockSize)
	}
	out := make([]byte, len(in))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, in)
	pad := int(out[len(out)-1])
	if pad == 0 || pad > aes.BlockSize {
		return nil, tcl.Errorf("%s: bad padding (wrong key or IV?)", cmd)
	}
	for _, b := range out[len(out)-pad:] {
		if int(b) != pad {
			return nil, tcl.Errorf("%s: bad padding (wrong key or IV?)", cmd)
		}
	}
	return out[:len(out)-pad], nil
}

// cmdCrypto runs CRYPTO::hash, sign, verify, encrypt and decrypt: once
// over the data given, or through a -ctx context fed call by call.
func cmdCrypto(cmd string) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		a, err := parseCryptoArgs(cmd, args)
		if err != nil {
			return tcl.Empty, err
		}
		_, final := a.opts["-final"]
		name, withCtx := a.str("-ctx")
		if !withCtx {
			if final {
				return tcl.Empty, tcl.Errorf("%s: -final needs -ctx", cmd)
			}
			if !a.has {
				return tcl.Empty, tcl.WrongArgs(cryptoUsage[cmd])
			}
			c := &cryptoCtx{cmd: cmd}
			if err := c.setup(cmd, a); err != nil {
				return tcl.Empty, err
			}
			return c.run(cmd, a.data, true)
		}
		s := sessionOf(in)
		if s == nil {
			return tcl.Empty, tcl.Errorf("%s: -ctx is not valid here", cmd)
		}
		c, err := s.cryptoContext(cmd, name)
		if err == nil {
			err = c.setup(cmd, a)
		}
		if err != nil {
			delete(s.crypto, name)
			return tcl.Empty, err
		}
		v, err := c.run(cmd, a.data, final)
		if final || err != nil {
			delete(s.crypto, name)
		}
		return v, err
	}
}

// maxPBKDF2Rounds bounds keygen's -rounds [M]: a command cannot be
// interrupted by the event's time budget (500 ms), and 100,000 rounds of
// HMAC-MD5 take tens of milliseconds of a loop's time, ten times the
// rounds published iRules use.
const maxPBKDF2Rounds = 100_000

// cmdCryptoKeygen makes random keys and IVs, or derives a key from a
// passphrase with PBKDF2 over MD5.
func cmdCryptoKeygen(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "CRYPTO::keygen"
	a, err := parseCryptoArgs(cmd, args)
	if err != nil {
		return tcl.Empty, err
	}
	if a.has {
		return tcl.Empty, tcl.WrongArgs(cryptoUsage[cmd])
	}
	alg, _ := a.str("-alg")
	lenv, ok := a.opts["-len"]
	if !ok {
		return tcl.Empty, tcl.Errorf("%s: -len is required", cmd)
	}
	bits, err := lenv.Int64()
	if err != nil || bits <= 0 || bits%8 != 0 || bits > 1<<16 {
		return tcl.Empty, tcl.Errorf("%s: -len %q is not a positive multiple of 8 bits (up to 65536)", cmd, lenv.String())
	}
	switch alg {
	case "random":
		b := make([]byte, bits/8)
		rand.Read(b)
		return tcl.Bytes(b), nil
	case "pbkdf2-md5":
		pass, ok := a.str("-passphrase")
		salt, sok, err := a.bytes(cmd, "-salt")
		if err != nil {
			return tcl.Empty, err
		}
		rv, rok := a.opts["-rounds"]
		if !ok || !sok || !rok {
			return tcl.Empty, tcl.Errorf("%s: pbkdf2-md5 needs -passphrase, -salt or -salthex, and -rounds", cmd)
		}
		rounds, err := rv.Int64()
		if err != nil || rounds < 1 || rounds > maxPBKDF2Rounds {
			return tcl.Empty, tcl.Errorf("%s: -rounds %q is not a count from 1 to %d", cmd, rv.String(), maxPBKDF2Rounds)
		}
		key, err := pbkdf2.Key(md5.New, pass, salt, int(rounds), int(bits/8))
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", cmd, err)
		}
		return tcl.Bytes(key), nil
	}
	return tcl.Empty, badCryptoAlg(cmd, alg, []string{"pbkdf2-md5", "random"})
}

// cryptoHook marks a rule that names, as a literal -alg, an F5
// algorithm openltm does not compute.
func cryptoHook(cmd string) func(c *tcl.Compiler) error {
	return func(c *tcl.Compiler) error {
		for i := 1; i+1 < c.NumWords(); i++ {
			if w, ok := c.Literal(i); !ok || w != "-alg" {
				continue
			}
			if err := unsupportedHook(i+1, cmd+" -alg", cryptoNotRun[cmd]...)(c); err != nil {
				return err
			}
		}
		return nil
	}
}

// registerCrypto adds the CRYPTO:: commands and rmd160.
func registerCrypto(t *tcl.Commands) {
	for _, cmd := range []string{"CRYPTO::hash", "CRYPTO::sign", "CRYPTO::verify", "CRYPTO::encrypt", "CRYPTO::decrypt"} {
		t.Register(cmd, cmdCrypto(cmd)).Compile = cryptoHook(cmd)
	}
	t.Register("CRYPTO::keygen", cmdCryptoKeygen).Compile = cryptoHook("CRYPTO::keygen")
	t.Register("rmd160", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs("rmd160 string")
		}
		h := ripemd160.New()
		h.Write(tcl.BytesOf(args[1]))
		return tcl.Bytes(h.Sum(nil)), nil
	})
}
