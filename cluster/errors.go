package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Sentinel errors, for errors.Is; the typed errors below carry the detail.
var (
	// ErrConflict: another device committed to the group first.
	ErrConflict = errors.New("device group generation conflict")
	// ErrDisconnected: the group's etcd cluster cannot be reached.
	ErrDisconnected = errors.New("device group disconnected")
	// ErrNotTrusted: the device is not in the group's trust domain.
	ErrNotTrusted = errors.New("device not trusted")
	// ErrDamaged: a generation's text in etcd does not match its record.
	ErrDamaged = errors.New("generation damaged")
)

// ConflictError is returned by Commit when the group's head moved past the
// generation the change was made against: the caller loads Head and retries
// its change on top of it, exactly as a second admin on one device would.
type ConflictError struct {
	Group      string
	Base, Head uint64
	// By is the device that committed Head, when known.
	By string
}

func (e *ConflictError) Error() string {
	by := ""
	if e.By != "" {
		by = " by " + e.By
	}
	return fmt.Sprintf("Unable to commit to device group %s: the change was made against generation %d, but generation %d was committed%s in the meantime; apply generation %d and retry",
		e.Group, e.Base, e.Head, by, e.Head)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// DisconnectedError reports that an operation needed the group's etcd
// cluster and could not reach it. Nothing was changed.
type DisconnectedError struct {
	Op        string // what was attempted, e.g. "commit to device group dg1"
	Endpoints []string
	Err       error
}

func (e *DisconnectedError) Error() string {
	return fmt.Sprintf("Unable to %s: the device group's etcd cluster (%s) is unreachable: %v; the device keeps running its last configuration",
		e.Op, strings.Join(e.Endpoints, ", "), e.Err)
}

// Is makes errors.Is(err, ErrDisconnected) true.
func (e *DisconnectedError) Is(target error) bool { return target == ErrDisconnected }

// Unwrap gives the underlying transport error.
func (e *DisconnectedError) Unwrap() error { return e.Err }

// NotTrustedError refuses a device outside the trust domain.
type NotTrustedError struct {
	Device string
	Reason string
}

func (e *NotTrustedError) Error() string {
	return fmt.Sprintf("Device %s is not in the trust domain: %s; add it first with \"modify cm trust-domain Root ca-devices add { %s }\"",
		e.Device, e.Reason, e.Device)
}

// Is makes errors.Is(err, ErrNotTrusted) true.
func (e *NotTrustedError) Is(target error) bool { return target == ErrNotTrusted }

// DamagedError reports a generation whose text in etcd does not match its
// record; it is never applied.
type DamagedError struct {
	Group  string
	ID     uint64
	Reason string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("device group %s generation %d is damaged: %s", e.Group, e.ID, e.Reason)
}

// Is makes errors.Is(err, ErrDamaged) true.
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// unreachable tells transport failures (the cluster is down, partitioned or
// has no leader) from answers (a key is absent, a compare failed).
func unreachable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	switch {
	case errors.Is(err, rpctypes.ErrNoLeader), errors.Is(err, rpctypes.ErrTimeout),
		errors.Is(err, rpctypes.ErrTimeoutDueToLeaderFail), errors.Is(err, rpctypes.ErrTimeoutDueToConnectionLost),
		errors.Is(err, rpctypes.ErrStopped), errors.Is(err, rpctypes.ErrNotCapable):
		return true
	}
	if s, ok := status.FromError(err); ok {
		switch s.Code() {
		case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
			return true
		}
	}
	return false
}

// handshakeRefused recognises a TLS refusal of the device's certificate.
func handshakeRefused(err error) bool {
	if err == nil {
		return false
	}
	m := err.Error()
	return strings.Contains(m, "bad certificate") || strings.Contains(m, "unknown certificate authority") ||
		strings.Contains(m, "certificate required") || strings.Contains(m, "authentication handshake failed")
}
