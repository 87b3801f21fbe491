package httpcompress

import (
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
)

// An Encoder compresses one body. Its output is appended to the caller's
// buffers, so a body costs no copy beyond the compression itself, and the
// compressor (hundreds of KiB of state) comes from a pool per coding and
// level: a response allocates nothing in steady state.
type Encoder struct {
	coding Coding
	level  int
	gz     *gzip.Writer
	zl     *zlib.Writer
	sink   sink
	// in and out count the body's bytes before and after compression,
	// for Done.
	in, out int64
	// Done, when set, is told at Close of the body's coding and its bytes
	// before and after compression (the profile's statistics).
	Done func(c Coding, in, out int64)
}

// sink is where the compressor writes: the caller's buffer for the
// length of one call.
type sink struct{ b []byte }

func (s *sink) Write(p []byte) (int, error) {
	s.b = append(s.b, p...)
	return len(p), nil
}

// pools holds idle encoders by coding and level (index coding*10+level).
var pools [30]sync.Pool

// NewEncoder is an encoder for one body in coding c (Gzip or Deflate) at
// level 1 to 9 (out of range: 1).
func NewEncoder(c Coding, level int) *Encoder {
	if level < 1 || level > 9 {
		level = 1
	}
	if c != Deflate {
		c = Gzip
	}
	pool := &pools[int(c)*10+level]
	if e, ok := pool.Get().(*Encoder); ok {
		e.in, e.out, e.Done = 0, 0, nil
		if e.gz != nil {
			e.gz.Reset(&e.sink)
		} else {
			e.zl.Reset(&e.sink)
		}
		return e
	}
	e := &Encoder{coding: c, level: level}
	var err error
	if c == Gzip {
		e.gz, err = gzip.NewWriterLevel(&e.sink, level)
	} else {
		e.zl, err = zlib.NewWriterLevel(&e.sink, level)
	}
	if err != nil {
		panic(err) // (the level was checked)
	}
	return e
}

// Coding is the encoder's content coding.
func (e *Encoder) Coding() Coding { return e.coding }

// Write compresses p, the next bytes of the body, and appends to dst what
// the compressor gives. With flush, everything written so far is in the
// output (a sync flush), so a body that streams slowly is not held back
// by the compressor: what a member sent reaches the client at once, at
// the cost of a few bytes per part.
func (e *Encoder) Write(dst, p []byte, flush bool) []byte {
	if len(p) == 0 {
		return dst
	}
	e.sink.b = dst
	e.in += int64(len(p))
	if e.gz != nil {
		e.gz.Write(p)
		if flush {
			e.gz.Flush()
		}
	} else {
		e.zl.Write(p)
		if flush {
			e.zl.Flush()
		}
	}
	e.out += int64(len(e.sink.b) - len(dst))
	dst, e.sink.b = e.sink.b, nil
	return dst
}

// Close ends the body, appends the rest of the output (the trailer
// included) to dst, tells Done, and returns the encoder to its pool: e is
// not to be used again.
func (e *Encoder) Close(dst []byte) []byte {
	e.sink.b = dst
	if e.gz != nil {
		e.gz.Close()
	} else {
		e.zl.Close()
	}
	e.out += int64(len(e.sink.b) - len(dst))
	dst, e.sink.b = e.sink.b, nil
	if e.Done != nil {
		e.Done(e.coding, e.in, e.out)
	}
	pools[int(e.coding)*10+e.level].Put(e)
	return dst
}

// Whole compresses a whole body into dst: one Write and the Close.
func (e *Encoder) Whole(dst, body []byte) []byte {
	return e.Close(e.Write(dst, body, false))
}
