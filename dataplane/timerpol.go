package dataplane

import "github.com/openltm/openltm/dataplane/timerpol"

// TimerPolicy is a net timer-policy as a virtual's service-policy gives
// it to the virtual's flows (dataplane/timerpol).
type TimerPolicy = timerpol.Policy

// TimerRule is one rule of a TimerPolicy.
type TimerRule = timerpol.Rule

// TimerPorts is one destination port range of a TimerRule.
type TimerPorts = timerpol.PortRange

// TimerAllOther is TimerRule.Proto for ip-protocol all-other.
const TimerAllOther = timerpol.AllOther

// TimerImmediate is TimerRule.Idle for flow-idle-timeout immediate.
const TimerImmediate = timerpol.Immediate
