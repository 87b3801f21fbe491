package lsn

import (
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// The log lines a pool's log publisher gets [M: F5 names the events
// (LSN_ADD, LSN_DELETE, LSN_PB_ALLOCATED, LSN_PB_RELEASED) and writes
// addresses with their route domain, 10.1.1.1%0:4000; the key=value
// layout is its Splunk format's, the CSV one its csv-format's, as far
// as they are documented]:
//
//	lsn_event="LSN_ADD",cli="10.1.1.1%0:40000",nat="198.51.100.1%0:1030",dst="203.0.113.5%0:80",proto="tcp",pool="/Common/cgnat",mode="napt"
//	lsn_event="LSN_DELETE",cli=...,duration="1250"
//	lsn_event="LSN_PB_ALLOCATED",cli="10.1.1.1%0",pba="198.51.100.1%0:1024-1087",pool=...
//
// duration is milliseconds.

func (p *Pool) send(pc *config.LSNPool, line []byte) {
	if pc.LogPublisher == "" {
		return
	}
	f := p.set.send.Load()
	if f == nil {
		return
	}
	(*f)(pc.LogPublisher, line)
}

func (p *Pool) logTranslation(pc *config.LSNPool, event string, t *Translation, now time.Time) {
	if pc.LogPublisher == "" {
		return
	}
	proto := "tcp"
	if t.UDP {
		proto = "udp"
	}
	var b []byte
	if pc.LogCSV {
		b = append(b, '"')
		b = append(b, event...)
		b = append(b, `","`...)
		b = appendRD(b, t.Client.Addr().String(), t.Client.Port())
		b = append(b, `","`...)
		b = appendRD(b, t.Addr.Addr().String(), t.Addr.Port())
		b = append(b, `","`...)
		b = appendRD(b, t.Dst.Addr().String(), t.Dst.Port())
		b = append(b, `","`...)
		b = append(b, proto...)
		b = append(b, `","`...)
		b = append(b, pc.Name...)
		b = append(b, '"')
		if event == "LSN_DELETE" {
			b = append(b, `,"`...)
			b = strconv.AppendInt(b, now.Sub(t.Start).Milliseconds(), 10)
			b = append(b, '"')
		}
	} else {
		b = append(b, `lsn_event="`...)
		b = append(b, event...)
		b = append(b, `",cli="`...)
		b = appendRD(b, t.Client.Addr().String(), t.Client.Port())
		b = append(b, `",nat="`...)
		b = appendRD(b, t.Addr.Addr().String(), t.Addr.Port())
		b = append(b, `",dst="`...)
		b = appendRD(b, t.Dst.Addr().String(), t.Dst.Port())
		b = append(b, `",proto="`...)
		b = append(b, proto...)
		b = append(b, `",pool="`...)
		b = append(b, pc.Name...)
		b = append(b, `",mode="`...)
		b = append(b, pc.Mode...)
		b = append(b, '"')
		if t.Backup {
			b = append(b, `,backup="yes"`...)
		}
		if event == "LSN_DELETE" {
			b = append(b, `,duration="`...)
			b = strconv.AppendInt(b, now.Sub(t.Start).Milliseconds(), 10)
			b = append(b, '"')
		}
	}
	p.send(pc, b)
}

func (p *Pool) logBlock(pc *config.LSNPool, event string, bl *block, now time.Time) {
	if pc.LogPublisher == "" {
		return
	}
	var b []byte
	b = append(b, `lsn_event="`...)
	b = append(b, event...)
	b = append(b, `",cli="`...)
	b = append(b, bl.owner.addr.String()...)
	b = append(b, `%0",pba="`...)
	b = appendRD(b, bl.addr.addr.String(), bl.low)
	b = append(b, '-')
	b = strconv.AppendUint(b, uint64(bl.high), 10)
	b = append(b, `",pool="`...)
	b = append(b, pc.Name...)
	b = append(b, '"')
	if event == "LSN_PB_RELEASED" {
		b = append(b, `,duration="`...)
		b = strconv.AppendInt(b, now.Sub(bl.created).Milliseconds(), 10)
		b = append(b, '"')
	}
	p.send(pc, b)
}

// appendRD writes addr%0:port, an IPv6 address in brackets.
func appendRD(b []byte, addr string, port uint16) []byte {
	six := len(addr) > 0 && containsColon(addr)
	if six {
		b = append(b, '[')
	}
	b = append(b, addr...)
	b = append(b, "%0"...)
	if six {
		b = append(b, ']')
	}
	b = append(b, ':')
	return strconv.AppendUint(b, uint64(port), 10)
}

func containsColon(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			return true
		}
	}
	return false
}
