package starttls

import (
	"bytes"
	"testing"
)

// FuzzSession feeds any lines, alternately the client's and the
// member's, to each protocol's session in each mode: nothing panics,
// and the virtual's answers are whole lines.
func FuzzSession(f *testing.F) {
	f.Add([]byte("EHLO x\n250-a\n250 STARTTLS\nSTARTTLS\nDATA\n354 go\n.\nBDAT 5 LAST\n"))
	f.Add([]byte("a CAPABILITY\n* CAPABILITY IMAP4rev1\na LOGIN {5}\n* 1 FETCH {3}\nb IDLE\n+ idling\nDONE\nb OK\n"))
	f.Add([]byte("CAPA\n+OK\nSTLS\n.\nAUTH PLAIN\n+ \nx\n+OK\nRETR 1\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		lines := bytes.SplitAfter(in, []byte("\n"))
		for p := SMTP; p <= POP3; p++ {
			for m := None; m <= Require; m++ {
				s := NewSession(p, m)
				for i, l := range lines {
					switch i % 3 {
					case 0:
						if c := s.FromClient(l); c.Raw < 0 || c.Drop < 0 {
							t.Fatalf("negative count %+v", c)
						}
					case 1:
						out, raw, _ := s.FromServer(nil, l)
						_ = out
						if raw < 0 {
							t.Fatalf("negative count %d", raw)
						}
					default:
						s.Long(l)
						if i%7 == 0 {
							s.TLSStarted()
						}
					}
					out, _ := s.Flush(nil)
					if len(out) > 0 && !bytes.HasSuffix(out, []byte("\r\n")) {
						t.Fatalf("answer %q is not a whole line", out)
					}
				}
			}
		}
	})
}
