package gslb

import (
	"sync"
	"testing"
	"unsafe"
)

func TestCounterSumsItsShards(t *testing.T) {
	var c counter
	var wg sync.WaitGroup
	for sh := 0; sh < 2*counterShards+1; sh++ { // more readers than shards
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				c.Inc(sh)
			}
		}()
	}
	wg.Wait()
	if got, want := c.Load(), uint64(1000*(2*counterShards+1)); got != want {
		t.Fatalf("Load = %d, want %d", got, want)
	}
	c.Reset()
	if got := c.Load(); got != 0 {
		t.Fatalf("after Reset: %d", got)
	}
}

// TestCounterCopiesApart: a copy's value is at least a cache line away
// from the other copies and from the fields around the counter.
func TestCounterCopiesApart(t *testing.T) {
	var s struct {
		before uint64
		c      counter
		after  uint64
	}
	base := uintptr(unsafe.Pointer(&s))
	ends := []uintptr{uintptr(unsafe.Pointer(&s.before)) - base + 8}
	for i := range s.c.sh {
		off := uintptr(unsafe.Pointer(&s.c.sh[i])) - base
		if off < ends[len(ends)-1]+64 {
			t.Fatalf("copy %d at %d, within a line of the data ending at %d", i, off, ends[len(ends)-1])
		}
		ends = append(ends, off+8)
	}
	if after := uintptr(unsafe.Pointer(&s.after)) - base; after < ends[len(ends)-1]+64 {
		t.Fatalf("the next field at %d, within a line of the last copy ending at %d", after, ends[len(ends)-1])
	}
}
