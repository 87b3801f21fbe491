package rules

import (
	"strings"
	"testing"
)

// The expected values come from other implementations (openssl enc,
// Python's hashlib and hmac), since the other end of a rule's digest or
// ciphertext is seldom a BIG-IP.
func TestCryptoCommands(t *testing.T) {
	const fox = `"The quick brown fox jumps over the lazy dog"`
	cases := []struct{ expr, want string }{
		{"binary encode hex [CRYPTO::hash -alg sha224 abc]", "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"},
		{"binary encode hex [CRYPTO::hash -alg ripemd160 abc]", "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc"},
		{"binary encode hex [rmd160 abc]", "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc"},
		{"string equal [CRYPTO::hash -alg sha256 abc] [sha256 abc]", "1"},
		{"string equal [CRYPTO::hash -alg md5 abc] [md5 abc]", "1"},
		{"b64encode [CRYPTO::hash -alg sha384 abc]", "ywB1P0WjXou1oD1pmsZQBycsMqsO3tFjGotgWkP/W+2AhgcroefMI1i67KE0yCWn"},
		// Data and options in any order, as F5's synopsis allows.
		{"binary encode hex [CRYPTO::sign -alg hmac-sha256 -key key " + fox + "]", "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"},
		{"binary encode hex [CRYPTO::sign -keyhex 6b6579 -alg hmac-md5 " + fox + "]", "80070713463e7749b90c2dc24911e275"},
		{"binary encode hex [CRYPTO::sign -alg hmac-sha1 -key key " + fox + "]", "de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9"},
		{"CRYPTO::verify -alg hmac-sha1 -key key -signature [binary decode hex de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9] " + fox, "1"},
		{"CRYPTO::verify -alg hmac-sha1 -key kez -signature [binary decode hex de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9] " + fox, "0"},
		{"binary encode hex [CRYPTO::encrypt -alg aes-128-cbc -keyhex 000102030405060708090a0b0c0d0e0f -ivhex 0f0e0d0c0b0a09080706050403020100 {hello world}]", "3fb51c0ccbcb533bb82a08e6817013ea"},
		{"binary encode hex [CRYPTO::encrypt -alg aes-256-cbc -keyhex 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f -ivhex 00000000000000000000000000000000 {sixteen byte msg}]", "c48c797d60f5d47bb9cb36bdda9a07e14960d5452beeecc17dd50872028ae230"},
		{"CRYPTO::decrypt -alg aes-128-cbc -keyhex 000102030405060708090a0b0c0d0e0f -ivhex 0f0e0d0c0b0a09080706050403020100 [binary decode hex 3fb51c0ccbcb533bb82a08e6817013ea]", "hello world"},
		{"binary encode hex [CRYPTO::keygen -alg pbkdf2-md5 -len 128 -passphrase password -salt salt -rounds 1000]", "8d189946a32d883622a16ae18af0632f"},
		{"binary encode hex [CRYPTO::keygen -alg pbkdf2-md5 -len 128 -passphrase password -salthex 73616c74 -rounds 1000]", "8d189946a32d883622a16ae18af0632f"},
		{"string length [CRYPTO::keygen -alg random -len 256]", "32"},
		{"expr {[CRYPTO::keygen -alg random -len 128] ne [CRYPTO::keygen -alg random -len 128]}", "1"},
		// A random key and IV round trip.
		{"set k [CRYPTO::keygen -alg random -len 192]; set iv [CRYPTO::keygen -alg random -len 128]; CRYPTO::decrypt -alg aes-192-cbc -key $k -iv $iv [CRYPTO::encrypt -alg aes-192-cbc -key $k -iv $iv {a longer value of more than one block}]", "a longer value of more than one block"},
	}
	for _, c := range cases {
		got, err := evalIn(t, newFakeConn(), nil, HTTPRequest, c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s = %q, want %q", c.expr, got, c.want)
		}
	}
}

// A context is fed call by call and answers at -final; its results put
// together are the one-shot result, and it is free again afterwards.
func TestCryptoContexts(t *testing.T) {
	cases := []struct{ script, want string }{
		{`CRYPTO::hash -alg sha256 -ctx h part1
		  set out [binary encode hex [CRYPTO::hash -ctx h -final part2]]`, "4986fc0feee88f7e3d1441ba8fe651b1626115c2244e45ee1ed1fe850e9ef428"},
		{`CRYPTO::sign -ctx s -alg hmac-sha256 -key key "The quick brown "
		  CRYPTO::sign -ctx s "fox jumps over "
		  set out [binary encode hex [CRYPTO::sign -ctx s -final "the lazy dog"]]`, "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"},
		{`set sig [CRYPTO::sign -alg hmac-sha1 -key k data]
		  CRYPTO::verify -ctx v -alg hmac-sha1 -key k -signature $sig da
		  set out [CRYPTO::verify -ctx v -final ta]`, "1"},
		{`set a [CRYPTO::encrypt -ctx e -alg aes-128-cbc -keyhex 000102030405060708090a0b0c0d0e0f -ivhex 0f0e0d0c0b0a09080706050403020100 hello]
		  append a [CRYPTO::encrypt -ctx e -final { world}]
		  set out [binary encode hex $a]`, "3fb51c0ccbcb533bb82a08e6817013ea"},
		// After -final the name starts a new context, of any kind.
		{`CRYPTO::hash -alg md5 -ctx c -final abc
		  set out [binary encode hex [CRYPTO::hash -alg sha1 -ctx c -final abc]]`, "a9993e364706816aba3e25717850c26c9cd0d89d"},
	}
	for _, c := range cases {
		r := mustCompile(t, "ctx", "when HTTP_REQUEST {\n"+c.script+"\n}")
		p := NewProgram(&Env{}, r)
		s := p.NewConnState(newFakeConn())
		if err := s.Run(HTTPRequest); err != nil {
			t.Errorf("%s: %v", c.script, err)
		} else if got, _ := s.Var("out"); got != c.want {
			t.Errorf("%s: out = %q, want %q", c.script, got, c.want)
		}
		if len(s.crypto) != 0 {
			t.Errorf("%s: %d contexts left open", c.script, len(s.crypto))
		}
		s.Release()
	}
}

func TestCryptoErrors(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"CRYPTO::hash abc", "-alg is required"},
		{"CRYPTO::hash -alg sha3 abc", `unknown algorithm "sha3"; valid: md5 ripemd160 sha1 sha224 sha256 sha384 sha512`},
		{"CRYPTO::hash -alg sha1", "wrong # args"},
		{"CRYPTO::hash -alg sha1 a b", "wrong # args"},
		{"CRYPTO::hash -alg sha1 -final abc", "-final needs -ctx"},
		{"CRYPTO::sign -alg sha1 -key k abc", `unknown algorithm "sha1"; valid: hmac-md5`},
		{"CRYPTO::sign -alg hmac-sha1 abc", "-key or -keyhex is required"},
		{"CRYPTO::sign -alg hmac-sha1 -keyhex zz abc", `-keyhex "zz" is not hexadecimal`},
		{"CRYPTO::verify -alg hmac-sha1 -key k abc", "-signature is required"},
		{"CRYPTO::encrypt -alg aes-128-cbc -key short -ivhex 000102030405060708090a0b0c0d0e0f abc", "aes-128-cbc takes a key of 16 bytes, not 5"},
		{"CRYPTO::encrypt -alg aes-128-cbc -keyhex 000102030405060708090a0b0c0d0e0f abc", "takes an IV of 16 bytes (-iv or -ivhex), not 0"},
		{"CRYPTO::encrypt -alg des-cbc -key k abc", `unknown algorithm "des-cbc"; valid: aes-128-cbc aes-192-cbc aes-256-cbc`},
		{"CRYPTO::decrypt -alg aes-128-cbc -keyhex 000102030405060708090a0b0c0d0e0f -ivhex 000102030405060708090a0b0c0d0e0f abc", "not a whole number of 16-byte blocks"},
		{"CRYPTO::decrypt -alg aes-128-cbc -keyhex 00000000000000000000000000000000 -ivhex 0f0e0d0c0b0a09080706050403020100 [binary decode hex 3fb51c0ccbcb533bb82a08e6817013ea]", "bad padding"},
		{"CRYPTO::keygen -alg random", "-len is required"},
		{"CRYPTO::keygen -alg random -len 12", `-len "12" is not a positive multiple of 8`},
		{"CRYPTO::keygen -alg pbkdf2-md5 -len 128 -passphrase p", "needs -passphrase, -salt or -salthex, and -rounds"},
		{"CRYPTO::keygen -alg other -len 128", `unknown algorithm "other"`},
		{"CRYPTO::keygen -alg pbkdf2-md5 -len 128 -passphrase p -salt s -rounds 1000000", `-rounds "1000000" is not a count from 1 to 100000`},
	}
	for _, c := range cases {
		_, err := evalIn(t, newFakeConn(), nil, HTTPRequest, c.expr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.expr, err, c.want)
		}
	}
	// A context cannot change its kind or its algorithm midway.
	for _, script := range []string{
		"CRYPTO::hash -alg sha1 -ctx c a\nCRYPTO::sign -ctx c -final b",
		"CRYPTO::hash -alg sha1 -ctx c a\nCRYPTO::hash -alg md5 -ctx c -final b",
		"CRYPTO::sign -alg hmac-sha1 -key k -ctx c a\nCRYPTO::sign -ctx c -key j -final b",
	} {
		r := mustCompile(t, "ctx", "when HTTP_REQUEST {\n"+script+"\n}")
		s := NewProgram(&Env{}, r).NewConnState(newFakeConn())
		if err := s.Run(HTTPRequest); err == nil {
			t.Errorf("%q ran", script)
		}
		s.Release()
	}
}

// A rule naming an F5 algorithm openltm does not compute is kept, not
// run: its virtual servers carry no traffic and say why.
func TestCryptoNotRun(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"when HTTP_REQUEST { set x [CRYPTO::encrypt -alg rsa-pub -key $k abc] }", "CRYPTO::encrypt -alg rsa-pub"},
		{"when HTTP_REQUEST { set x [CRYPTO::keygen -alg rsa -len 1024] }", "CRYPTO::keygen -alg rsa"},
	} {
		r, err := Compile("nr", c.src)
		if r == nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		u := r.Unsupported()
		if len(u) != 1 || u[0] != c.want {
			t.Errorf("%s: unsupported %+v, want %q", c.src, u, c.want)
		}
	}
	r := mustCompile(t, "ok", "when HTTP_REQUEST { set x [CRYPTO::encrypt -alg aes-128-cbc -key $k -iv $iv abc] }")
	if u := r.Unsupported(); len(u) != 0 {
		t.Errorf("aes-128-cbc: unsupported %+v", u)
	}
}

// FuzzCrypto runs the CRYPTO:: commands over any words (and whatever
// command the words name themselves): a rule's bad arguments are its
// error, never a panic.
func FuzzCrypto(f *testing.F) {
	for _, s := range []string{
		"CRYPTO::hash -alg sha256 abc",
		"CRYPTO::sign -ctx c -alg hmac-sha1 -key k x",
		"CRYPTO::encrypt -alg aes-128-cbc -keyhex 000102030405060708090a0b0c0d0e0f -ivhex 0f0e0d0c0b0a09080706050403020100 x",
		"CRYPTO::decrypt -alg aes-256-cbc -key k -iv i -final",
		"CRYPTO::keygen -alg pbkdf2-md5 -len 64 -passphrase p -salthex 00 -rounds 2",
		"CRYPTO::verify -alg hmac-md5 -key k -signature s d",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, words string) {
		if strings.ContainsAny(words, "[]{}$\\\";\n") || len(words) > 400 {
			return // one command of plain words
		}
		for _, cmd := range []string{words, "CRYPTO::hash " + words, "CRYPTO::encrypt " + words, "CRYPTO::decrypt -ctx c " + words, "CRYPTO::keygen " + words} {
			r, err := Compile("fz", "when HTTP_REQUEST { catch { "+cmd+" } }")
			if r == nil {
				if err == nil {
					t.Fatalf("%q: no rule and no error", cmd)
				}
				continue
			}
			s := NewProgram(&Env{}, r).NewConnState(newFakeConn())
			s.Run(HTTPRequest)
			s.Release()
		}
	})
}
