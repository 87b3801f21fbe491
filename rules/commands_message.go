package rules

import (
	"strconv"

	"github.com/openltm/openltm/rules/tcl"
)

// MESSAGE:: is the protocol-neutral view of the message in hand in the
// message-routing events (GENERICMESSAGE_ and MR_): the same message the
// GENERICMESSAGE:: and MR:: commands read, whatever its protocol.
//
//	MESSAGE::proto         the router's protocol (genericmsg, or the protocol profile's name), as MR::protocol
//	MESSAGE::type          request, response (an answer a request was matched to) or message [M]
//	MESSAGE::field NAME    src, dst, length, text, status, is_request or no_response [M]
//
// F5 lists the commands without their forms or values; the names and
// answers above are openltm's [M], each the message's real value. An
// unknown NAME is a Tcl error naming the valid ones.

func registerMessage(t *tcl.Commands) {
	t.Register("MESSAGE::proto", cmdMessageProto)
	t.Register("MESSAGE::type", cmdMessageType)
	t.Register("MESSAGE::field", cmdMessageField)
}

func cmdMessageProto(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("MESSAGE::proto")
	}
	st, err := mrMsg(in, "MESSAGE::proto", true)
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(st.protoName()), nil
}

func cmdMessageType(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("MESSAGE::type")
	}
	st, err := mrMsg(in, "MESSAGE::type", true)
	if err != nil {
		return tcl.Empty, err
	}
	switch m := st.msg; {
	case m.Request:
		return tcl.Str("request"), nil
	case m.Answer:
		return tcl.Str("response"), nil
	}
	return tcl.Str("message"), nil
}

const messageFieldNames = "src, dst, length, text, status, is_request or no_response"

func cmdMessageField(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("MESSAGE::field NAME")
	}
	st, err := mrMsg(in, "MESSAGE::field", true)
	if err != nil {
		return tcl.Empty, err
	}
	m := st.msg
	switch name := args[1].String(); name {
	case "src":
		return tcl.Str(m.Src), nil
	case "dst":
		return tcl.Str(m.Dst), nil
	case "length":
		return tcl.Str(strconv.Itoa(len(m.Data))), nil
	case "text":
		return tcl.Str(string(m.Data)), nil
	case "status":
		return tcl.Str(m.Status), nil
	case "is_request":
		return tcl.Bool(m.Request), nil
	case "no_response":
		return tcl.Bool(!m.Request), nil
	default:
		return tcl.Empty, tcl.Errorf("MESSAGE::field: no field %q: valid are %s", name, messageFieldNames)
	}
}
