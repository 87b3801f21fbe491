package mblb

import "time"

// Late replies and reused request ids on a client's own member
// connections (without one-connect, where a request goes under the
// client's own id). A request cancelled or timed out there may still
// get its reply, which goes to the client as a late reply; but a client
// that reuses that request id meanwhile would take the late reply for
// the answer to its new request. So [M: map the id rather than drop the
// new request's reply or hold the request back]:
//
//   - the forgotten request's id there is kept as late (keepLateOwn),
//     for iiopLateKeep and at most iiopLateMax per client, as a shared
//     connection's retired routes are;
//   - a new request of the client going to that connection under an id
//     a late reply is due for there (or another request was mapped to)
//     goes under an id of its own there (mapOwn: a counter, skipping the
//     ids in use there), written into it, its CancelRequest and its GIOP
//     1.2 Fragments; its reply, and its 1.2 Fragments, get the client's
//     id back (ownRoute);
//   - the late reply comes under the old id: it goes to the client when
//     the client awaits no newer request under that id, else it is
//     dropped (with its Fragments) [M: the client's ORB would take it
//     for the newer request's answer];
//   - a reply on one connection under an id the client awaits from
//     another connection is dropped likewise: it cannot be that
//     request's answer.
//
// Cost: nothing per message until the client cancels or times out a
// request on its own connection (two nil tests under the lock taken
// already for a reply, an atomic load for a member's GIOP 1.2
// Fragment); after that, a map lookup or two per request and reply while
// late ids are kept (stale ones are let go as the map fills).

// keepLateOwn files p, forgotten on the client's own connection as the
// client's id, as late: its reply may still come. The caller holds s.mu.
func (is *iiopSession) keepLateOwn(id uint32, p iiopPending) {
	if p.sc.iiop != nil {
		return // (a shared connection retires its route: retire)
	}
	w := iiopWire{p.sc, p.mid}
	if p.mapped {
		delete(is.mapped, w)
	}
	is.fileLateOwn(w, iiopLateOwn{id: id, at: time.Now().UnixNano()})
}

// fileLateOwn files l under w, first letting go of the stale ones when
// full; still full, l is not kept (its reply will be taken as unknown).
// The caller holds s.mu.
func (is *iiopSession) fileLateOwn(w iiopWire, l iiopLateOwn) {
	if is.lateOwn == nil {
		is.lateOwn = map[iiopWire]iiopLateOwn{}
		is.ownLate.Store(true)
	}
	if len(is.lateOwn) >= iiopLateMax {
		for k, x := range is.lateOwn {
			if l.at-x.at > int64(iiopLateKeep) {
				delete(is.lateOwn, k)
			}
		}
		if len(is.lateOwn) >= iiopLateMax {
			return
		}
	}
	is.lateOwn[w] = l
}

// mapOwn is the id on the client's own connection sc for a new request
// of the client's id id: id itself, unless a late reply is due there
// under it, or another request was mapped to it there; then an id of its
// own, filed in mapped. The caller holds s.mu.
func (is *iiopSession) mapOwn(sc *serverConn, id uint32) uint32 {
	w := iiopWire{sc, id}
	_, need := is.mapped[w]
	if l, ok := is.lateOwn[w]; ok {
		if time.Now().UnixNano()-l.at > int64(iiopLateKeep) {
			is.dropLateOwn(w)
		} else {
			need = true
		}
	}
	if !need {
		return id
	}
	var mid uint32
	for {
		is.nextMid++
		mid = is.nextMid
		w := iiopWire{sc, mid}
		if _, used := is.lateOwn[w]; used {
			continue
		}
		if _, used := is.mapped[w]; used {
			continue
		}
		if p, used := is.pending[mid]; used && p.sc == sc && !p.mapped {
			continue
		}
		break
	}
	if is.mapped == nil {
		is.mapped = map[iiopWire]uint32{} // (lateOwn was filed first)
	}
	is.mapped[iiopWire{sc, mid}] = id
	return mid
}

// dropLateOwn forgets w's late entry. The caller holds s.mu.
func (is *iiopSession) dropLateOwn(w iiopWire) {
	delete(is.lateOwn, w)
	if len(is.lateOwn) == 0 {
		is.lateOwn = nil // (back to the nil test)
	}
}

// ownRoute is whose a member's reply (first: its first message) or GIOP
// 1.2 Fragment under mid on the client's own connection sc is: the
// client's id, or false to drop it (a late reply whose id the client
// reused, with its Fragments); ended with last. The caller holds s.mu,
// and calls it only when lateOwn or mapped is not nil.
func (is *iiopSession) ownRoute(sc *serverConn, mid uint32, first, last bool) (uint32, bool) {
	w := iiopWire{sc, mid}
	if id, ok := is.mapped[w]; ok {
		if last {
			delete(is.mapped, w)
		}
		return id, true
	}
	l, ok := is.lateOwn[w]
	if !ok {
		return mid, true
	}
	if first {
		if time.Now().UnixNano()-l.at > int64(iiopLateKeep) && !l.skip {
			is.dropLateOwn(w)
			return mid, true // (kept too long: as unknown)
		}
		if is.reused(l.id) {
			l.skip = true
		}
		is.lateOwn[w] = l
	}
	if last {
		is.dropLateOwn(w)
	}
	return l.id, !l.skip
}

// forgetOwn lets go of the late ids of sc, whose connection ended. The
// caller holds s.mu.
func (is *iiopSession) forgetOwn(sc *serverConn) {
	for w := range is.lateOwn {
		if w.sc == sc {
			delete(is.lateOwn, w)
		}
	}
	if len(is.lateOwn) == 0 {
		is.lateOwn = nil
	}
}
