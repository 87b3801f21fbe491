package daemon

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/openltm/openltm/daemon/tmshscript"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// iCall's built-in events: the ones ltmd raises itself, as BIG-IP's
// daemons publish theirs to iCall ("Different places in the system are
// able to notify the iCall engine of events that happen on the system.
// Events come with contextual information describing the objects that
// are changing state", https://clouddocs.f5.com/api/icontrol-soap/iCall.html).
// F5 names one such event in its tmsh reference (LTM_POOL_UP, in the
// perpetual handler's example,
// https://clouddocs.f5.com/cli/tmsh-reference/latest/modules/sys/sys_icall_handler_perpetual.html)
// and documents neither the list nor the contexts; these names and keys
// are openltm's [M]:
//
//   - LTM_POOL_MEMBER_UP and LTM_POOL_MEMBER_DOWN: a pool member's
//     monitor status became up or down (its own monitors; a node's
//     monitors do not raise them). Context: pool, member, address, port,
//     status, previous-status.
//   - LTM_POOL_UP and LTM_POOL_DOWN: a pool's first member came up, or its
//     last one that was up went down. Context: pool, member (the member
//     whose change it was). Only an up or down verdict raises them: a
//     member whose monitor is removed, or that is checking again, raises
//     nothing.
//   - SYS_CONFIG_CREATED, SYS_CONFIG_MODIFIED and SYS_CONFIG_DELETED: a
//     commit created, changed or deleted an object (each object once a
//     commit; objects of kinds openltm does not know are left out).
//     Context: kind ("ltm pool"), name (its full name; empty for a
//     singleton such as ltm global-settings general), object (both, as
//     one word list: "ltm pool /Common/web").
//
// A commit compares the configurations only while an active handler
// subscribes to a SYS_CONFIG_ event, and the dataplane's member status
// hook is installed only while one takes the pool and member events:
// otherwise a member's status change (never on a connection's path)
// costs the plane one nil check.
const (
	evMemberUp   = "LTM_POOL_MEMBER_UP"
	evMemberDown = "LTM_POOL_MEMBER_DOWN"
	evPoolUp     = "LTM_POOL_UP"
	evPoolDown   = "LTM_POOL_DOWN"
	evCreated    = "SYS_CONFIG_CREATED"
	evModified   = "SYS_CONFIG_MODIFIED"
	evDeleted    = "SYS_CONFIG_DELETED"
)

// builtinWants says which of the built-in events some handler takes.
type builtinWants struct{ member, config bool }

// wantsOf reads the built-in events the plans' subscriptions name.
func wantsOf(plans map[string]handlerPlan) builtinWants {
	var w builtinWants
	for _, p := range plans {
		if !p.running {
			continue
		}
		for _, sub := range p.subs {
			switch sub.event {
			case evMemberUp, evMemberDown, evPoolUp, evPoolDown:
				w.member = true
			case evCreated, evModified, evDeleted:
				w.config = true
			}
		}
	}
	return w
}

// memberEvents is on while a handler takes the pool and member events;
// only then is the dataplane's member status hook installed, so a
// status change costs the plane one nil check otherwise.
type memberEvents struct {
	on    atomic.Bool
	plane atomic.Pointer[dataplane.Plane]
	mu    sync.Mutex // orders installs and removals
}

// attachMembers is AttachDataplane's: the plane whose members raise
// the events.
func (s *scripts) attachMembers(p *dataplane.Plane) {
	s.members.plane.Store(p)
	s.setMemberEvents(s.members.on.Load())
}

// setMemberEvents turns the pool and member events on or off, installing
// or removing the plane's hook.
func (s *scripts) setMemberEvents(on bool) {
	s.members.mu.Lock()
	defer s.members.mu.Unlock()
	s.members.on.Store(on)
	p := s.members.plane.Load()
	switch {
	case p == nil:
	case on:
		p.SetMemberStatusHook(s.memberStatus)
	default:
		p.SetMemberStatusHook(nil)
	}
}

// memberStatus is the dataplane's member status hook: it raises the
// member's event, and the pool's when the pool came up or went down.
func (s *scripts) memberStatus(ms dataplane.MemberStatus) {
	if !s.members.on.Load() {
		return
	}
	for _, ev := range memberStatusEvents(ms) {
		s.generate(ev)
	}
}

// memberStatusEvents are the events one member status change raises.
func memberStatusEvents(ms dataplane.MemberStatus) []*tmshscript.Event {
	var out []*tmshscript.Event
	name := ""
	switch ms.New {
	case "up":
		name = evMemberUp
	case "down":
		name = evMemberDown
	}
	if name == "" {
		// A member left without a verdict (its monitor removed, or
		// checking again): no event, and no pool event either [M].
		return nil
	}
	addr, port := splitMember(ms.Member)
	out = append(out, &tmshscript.Event{Name: name, Context: [][2]string{
		{"pool", ms.Pool}, {"member", ms.Member}, {"address", addr}, {"port", port},
		{"status", ms.New}, {"previous-status", ms.Old},
	}})
	switch {
	case ms.PoolUp && !ms.PoolWasUp:
		out = append(out, &tmshscript.Event{Name: evPoolUp, Context: [][2]string{{"pool", ms.Pool}, {"member", ms.Member}}})
	case !ms.PoolUp && ms.PoolWasUp:
		out = append(out, &tmshscript.Event{Name: evPoolDown, Context: [][2]string{{"pool", ms.Pool}, {"member", ms.Member}}})
	}
	return out
}

// splitMember parts /Common/NODE:PORT (NODE.PORT when the node's name
// holds colons, an IPv6 address) into the node's name without its
// folder and the port.
func splitMember(m string) (addr, port string) {
	base := m[strings.LastIndexByte(m, '/')+1:]
	i := max(strings.LastIndexByte(base, ':'), strings.LastIndexByte(base, '.'))
	if i < 0 {
		return base, ""
	}
	return base[:i], base[i+1:]
}

// configEvents are the SYS_CONFIG_ events of a commit from old to cfg,
// in save order: created and modified objects, then deleted ones.
func configEvents(old, cfg *objects.Config) []*tmshscript.Event {
	if old == nil {
		return nil
	}
	ev := func(name string, o *objects.Object) *tmshscript.Event {
		kind := o.Kind.Key()
		obj := kind
		if o.Name != "" {
			obj += " " + o.Name
		}
		return &tmshscript.Event{Name: name, Context: [][2]string{{"kind", kind}, {"name", o.Name}, {"object", obj}}}
	}
	was := map[string]*objects.Object{}
	for _, o := range old.Objects() {
		if o.Kind != nil {
			was[o.Key()] = o
		}
	}
	var out []*tmshscript.Event
	for _, o := range cfg.Objects() {
		if o.Kind == nil {
			continue
		}
		w, ok := was[o.Key()]
		delete(was, o.Key())
		switch {
		case !ok:
			out = append(out, ev(evCreated, o))
		case w != o && objects.Format(w, objects.PrintOpts{}) != objects.Format(o, objects.PrintOpts{}):
			out = append(out, ev(evModified, o))
		}
	}
	for _, o := range old.Objects() {
		if _, gone := was[o.Key()]; gone && o.Kind != nil {
			out = append(out, ev(evDeleted, o))
		}
	}
	return out
}
