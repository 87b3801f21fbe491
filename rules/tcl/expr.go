package tcl

import (
	"fmt"
	"math"
	"math/big"
	"strings"
)

type opKind uint8

const (
	opLit opKind = iota
	opWord
	opNeg
	opPos
	opNot
	opBitNot
	opPow
	opMul
	opDiv
	opMod
	opAdd
	opSub
	opShl
	opShr
	opLt
	opGt
	opLe
	opGe
	opEq
	opNe
	opStrEq
	opStrNe
	opIn
	opNi
	opContains
	opStarts
	opEnds
	opMatchGlob
	opMatchRegex
	opBitAnd
	opBitXor
	opBitOr
	opAnd
	opOr
	opCond
	opFunc
)

var opNames = map[opKind]string{
	opNeg: "-", opPos: "+", opNot: "!", opBitNot: "~", opPow: "**", opMul: "*", opDiv: "/", opMod: "%",
	opAdd: "+", opSub: "-", opShl: "<<", opShr: ">>", opLt: "<", opGt: ">", opLe: "<=", opGe: ">=",
	opEq: "==", opNe: "!=", opBitAnd: "&", opBitXor: "^", opBitOr: "|", opAnd: "&&", opOr: "||",
}

type exprNode struct {
	op   opKind
	a, b *exprNode
	c    *exprNode
	val  Value
	w    *word
	fn   string
	args []*exprNode
}

// binary operators by token, with precedence (higher binds tighter).
type binOp struct {
	tok  string
	op   opKind
	prec int
}

var binOps = []binOp{
	{"**", opPow, 14},
	{"*", opMul, 13}, {"/", opDiv, 13}, {"%", opMod, 13},
	{"+", opAdd, 12}, {"-", opSub, 12},
	{"<<", opShl, 11}, {">>", opShr, 11},
	{"<=", opLe, 10}, {">=", opGe, 10}, {"<", opLt, 10}, {">", opGt, 10},
	{"==", opEq, 9}, {"!=", opNe, 9},
	{"&&", opAnd, 3}, {"||", opOr, 2},
	{"&", opBitAnd, 6}, {"^", opBitXor, 5}, {"|", opBitOr, 4},
}

var wordOps = map[string]binOp{
	"eq": {"eq", opStrEq, 8}, "ne": {"ne", opStrNe, 8},
	"in": {"in", opIn, 7}, "ni": {"ni", opNi, 7},
	"contains": {"contains", opContains, 8}, "starts_with": {"starts_with", opStarts, 8},
	"ends_with": {"ends_with", opEnds, 8}, "equals": {"equals", opStrEq, 8},
	"matches_glob": {"matches_glob", opMatchGlob, 8}, "matches_regex": {"matches_regex", opMatchRegex, 8},
	"and": {"and", opAnd, 3}, "or": {"or", opOr, 2},
}

type exprParser struct {
	p     *parser
	start int
}

func (c *compiler) compileExpr(src *Source, start, end int) (*exprNode, error) {
	ep := &exprParser{p: &parser{c: c, src: src, s: src.Text, pos: start, end: end}, start: start}
	n, err := ep.parseTernary()
	if err != nil {
		return nil, err
	}
	ep.skip()
	if ep.p.pos < ep.p.end {
		j := ep.p.pos
		for j < ep.p.end && isNameChar(ep.p.s[j]) {
			j++
		}
		if j > ep.p.pos {
			return nil, ep.bareword(ep.p.s[ep.p.pos:j])
		}
		return nil, ep.errf("syntax error in expression %s: extra tokens at end of expression", q(ep.text()))
	}
	return n, nil
}

func (ep *exprParser) text() string { return ep.p.s[ep.start:ep.p.end] }

func (ep *exprParser) errf(format string, args ...any) error {
	return ep.p.errAt(ep.p.pos, format, args...)
}

func (ep *exprParser) bareword(w string) error {
	return ep.errf("invalid bareword %s\nin expression %s;\nshould be \"$%s\" or \"{%s}\" or \"%s(...)\" or ...", q(w), q(ep.text()), w, w, w)
}

func (ep *exprParser) skip() {
	p := ep.p
	for p.pos < p.end {
		if isSpace(p.s[p.pos]) {
			p.pos++
		} else if p.s[p.pos] == '\\' && p.pos+1 < p.end && p.s[p.pos+1] == '\n' {
			p.pos += 2
		} else {
			break
		}
	}
}

func (ep *exprParser) parseTernary() (*exprNode, error) {
	cond, err := ep.parseBinary(0)
	if err != nil {
		return nil, err
	}
	ep.skip()
	p := ep.p
	if p.pos < p.end && p.s[p.pos] == '?' {
		p.pos++
		a, err := ep.parseTernary()
		if err != nil {
			return nil, err
		}
		ep.skip()
		if p.pos >= p.end || p.s[p.pos] != ':' {
			return nil, ep.errf("syntax error in expression %s: missing operator \":\"", q(ep.text()))
		}
		p.pos++
		b, err := ep.parseTernary()
		if err != nil {
			return nil, err
		}
		return &exprNode{op: opCond, a: cond, b: a, c: b}, nil
	}
	return cond, nil
}

// peekBinary finds the binary operator at the cursor without consuming it.
func (ep *exprParser) peekBinary() (binOp, int, bool) {
	p := ep.p
	rest := p.s[p.pos:p.end]
	for _, o := range binOps {
		if strings.HasPrefix(rest, o.tok) {
			return o, len(o.tok), true
		}
	}
	j := 0
	for j < len(rest) && (isNameChar(rest[j])) {
		j++
	}
	if j > 0 {
		if o, ok := wordOps[rest[:j]]; ok {
			return o, j, true
		}
	}
	return binOp{}, 0, false
}

func (ep *exprParser) parseBinary(minPrec int) (*exprNode, error) {
	left, err := ep.parseUnary()
	if err != nil {
		return nil, err
	}
	for {
		ep.skip()
		o, n, ok := ep.peekBinary()
		if !ok || o.prec <= minPrec {
			return left, nil
		}
		ep.p.pos += n
		next := o.prec
		if o.op == opPow {
			next = o.prec - 1 // right associative
		}
		right, err := ep.parseBinary(next)
		if err != nil {
			return nil, err
		}
		left = &exprNode{op: o.op, a: left, b: right}
	}
}

func (ep *exprParser) parseUnary() (*exprNode, error) {
	ep.skip()
	p := ep.p
	if p.pos >= p.end {
		return nil, ep.errf("syntax error in expression %s: premature end of expression", q(ep.text()))
	}
	var op opKind
	switch p.s[p.pos] {
	case '-':
		op = opNeg
	case '+':
		op = opPos
	case '!':
		op = opNot
	case '~':
		op = opBitNot
	default:
		if strings.HasPrefix(p.s[p.pos:p.end], "not") && (p.pos+3 >= p.end || !isNameChar(p.s[p.pos+3])) && !(p.pos+3 < p.end && p.s[p.pos+3] == '(') {
			p.pos += 3
			a, err := ep.parseUnary()
			if err != nil {
				return nil, err
			}
			return &exprNode{op: opNot, a: a}, nil
		}
		return ep.parsePrimary()
	}
	p.pos++
	a, err := ep.parseUnary()
	if err != nil {
		return nil, err
	}
	// constant folding keeps "-1" a literal
	if op == opNeg && a.op == opLit && a.val.kind == kInt && a.val.i != math.MinInt64 && !a.val.hasStr {
		return &exprNode{op: opLit, val: Int(-a.val.i)}, nil
	}
	return &exprNode{op: op, a: a}, nil
}

func (ep *exprParser) parsePrimary() (*exprNode, error) {
	p := ep.p
	ch := p.s[p.pos]
	switch {
	case ch == '(':
		p.pos++
		n, err := ep.parseTernary()
		if err != nil {
			return nil, err
		}
		ep.skip()
		if p.pos >= p.end || p.s[p.pos] != ')' {
			return nil, ep.errf("syntax error in expression %s: looking for close parenthesis", q(ep.text()))
		}
		p.pos++
		return n, nil
	case ch == '$':
		v, ok, err := p.parseVar(false)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, ep.errf("syntax error in expression %s: character not legal in expressions", q(ep.text()))
		}
		return &exprNode{op: opWord, w: &v}, nil
	case ch == '[':
		off := p.pos
		p.pos++
		sc, err := p.parseScript(true)
		if err != nil {
			return nil, err
		}
		return &exprNode{op: opWord, w: &word{kind: wCmd, script: sc, off: off}}, nil
	case ch == '"':
		p.pos++
		w, err := p.parseParts(func() bool { return p.s[p.pos] == '"' }, false, false)
		if err != nil {
			return nil, err
		}
		if p.pos >= p.end {
			return nil, ep.errf(`missing "`)
		}
		p.pos++
		if w.kind == wLit {
			return &exprNode{op: opLit, val: w.lit}, nil
		}
		return &exprNode{op: opWord, w: &w}, nil
	case ch == '{':
		w, err := p.parseBraced()
		if err != nil {
			return nil, err
		}
		return &exprNode{op: opLit, val: w.lit}, nil
	case ch >= '0' && ch <= '9' || ch == '.':
		j := p.pos
		for j < p.end {
			c := p.s[j]
			if isNameChar(c) || c == '.' {
				j++
			} else if (c == '+' || c == '-') && (p.s[j-1] == 'e' || p.s[j-1] == 'E') && !strings.HasPrefix(strings.ToLower(p.s[p.pos:j]), "0x") {
				j++
			} else {
				break
			}
		}
		tok := p.s[p.pos:j]
		n, ok := parseNumber(tok)
		if !ok {
			return nil, ep.bareword(tok)
		}
		p.pos = j
		return &exprNode{op: opLit, val: n.value()}, nil
	case isNameChar(ch):
		j := p.pos
		for j < p.end && (isNameChar(p.s[j]) || (p.s[j] == ':' && j+1 < p.end && p.s[j+1] == ':')) {
			if p.s[j] == ':' {
				j++
			}
			j++
		}
		name := p.s[p.pos:j]
		p.pos = j
		ep.skip()
		if p.pos < p.end && p.s[p.pos] == '(' {
			p.pos++
			var args []*exprNode
			ep.skip()
			if p.pos < p.end && p.s[p.pos] == ')' {
				p.pos++
			} else {
				for {
					a, err := ep.parseTernary()
					if err != nil {
						return nil, err
					}
					args = append(args, a)
					ep.skip()
					if p.pos < p.end && p.s[p.pos] == ',' {
						p.pos++
						continue
					}
					if p.pos < p.end && p.s[p.pos] == ')' {
						p.pos++
						break
					}
					return nil, ep.errf("syntax error in expression %s: missing close parenthesis at end of function call", q(ep.text()))
				}
			}
			name = strings.TrimPrefix(name, "::tcl::mathfunc::")
			if _, ok := mathFuncs[name]; !ok {
				return nil, ep.errf("invalid command name \"tcl::mathfunc::%s\"", name)
			}
			return &exprNode{op: opFunc, fn: name, args: args}, nil
		}
		if _, ok := parseBool(name); ok {
			return &exprNode{op: opLit, val: Str(name)}, nil
		}
		if n, ok := parseDouble(name); ok {
			return &exprNode{op: opLit, val: n.value()}, nil
		}
		return nil, ep.bareword(name)
	}
	return nil, ep.errf("syntax error in expression %s: character not legal in expressions", q(ep.text()))
}

// EvalExpr evaluates a value as an expression, using its compiled form when
// it has one.
func (in *Interp) EvalExpr(v Value) (Value, error) {
	if v.kind == kExpr {
		return in.evalExprNode(v.rep.(*exprNode))
	}
	s := v.String()
	c := &compiler{cmds: in.cmds, check: in.Check}
	n, err := c.compileExpr(&Source{Text: s}, 0, len(s))
	if err != nil {
		if se, ok := err.(*SyntaxError); ok {
			return Empty, errorf("%s", se.Msg)
		}
		return Empty, err
	}
	return in.EvalExpr(Value{s: s, hasStr: true, rep: n, kind: kExpr})
}

// evalExprNode evaluates a compiled expression as expr does: a lone word
// that reads as a number gives the number.
func (in *Interp) evalExprNode(n *exprNode) (Value, error) {
	r, err := in.evalExpr(n)
	if err == nil && n.op == opWord && r.kind == kStr {
		if num, ok := asNumber(r); ok {
			return num.value(), nil
		}
	}
	return r, err
}

// ExprBool evaluates a condition as if and while do.
func (in *Interp) ExprBool(v Value) (bool, error) {
	r, err := in.EvalExpr(v)
	if err != nil {
		return false, err
	}
	return r.Truth()
}

func (in *Interp) evalExpr(n *exprNode) (Value, error) {
	switch n.op {
	case opLit:
		return n.val, nil
	case opWord:
		return in.evalWord(n.w)
	case opAnd, opOr:
		a, err := in.evalExpr(n.a)
		if err != nil {
			return Empty, err
		}
		ab, err := exprTruth(a, n.op)
		if err != nil {
			return Empty, err
		}
		if n.op == opAnd && !ab {
			return Int(0), nil
		}
		if n.op == opOr && ab {
			return Int(1), nil
		}
		b, err := in.evalExpr(n.b)
		if err != nil {
			return Empty, err
		}
		bb, err := exprTruth(b, n.op)
		if err != nil {
			return Empty, err
		}
		return Bool(bb), nil
	case opCond:
		a, err := in.evalExpr(n.a)
		if err != nil {
			return Empty, err
		}
		t, err := a.Truth()
		if err != nil {
			return Empty, err
		}
		if t {
			return in.evalExpr(n.b)
		}
		return in.evalExpr(n.c)
	case opFunc:
		args := make([]Value, len(n.args))
		for i, a := range n.args {
			v, err := in.evalExpr(a)
			if err != nil {
				return Empty, err
			}
			args[i] = v
		}
		return in.callMath(n.fn, args)
	case opNeg, opPos, opNot, opBitNot:
		a, err := in.evalExpr(n.a)
		if err != nil {
			return Empty, err
		}
		return unaryOp(n.op, a)
	}
	a, err := in.evalExpr(n.a)
	if err != nil {
		return Empty, err
	}
	b, err := in.evalExpr(n.b)
	if err != nil {
		return Empty, err
	}
	return binaryOp(n.op, a, b)
}

func exprTruth(v Value, op opKind) (bool, error) {
	return v.Truth()
}

func operandErr(v Value, op opKind) error {
	s := v.String()
	if s == "" {
		return errorf("can't use empty string as operand of %s", q(opNames[op]))
	}
	if n, ok := asNumber(v); ok && n.kind == kDouble && math.IsNaN(n.f) {
		return errorf("can't use non-numeric floating-point value as operand of %s", q(opNames[op]))
	}
	return errorf("can't use non-numeric string as operand of %s", q(opNames[op]))
}

func numOperand(v Value, op opKind) (number, error) {
	n, ok := asNumber(v)
	if !ok || (n.kind == kDouble && math.IsNaN(n.f)) {
		return n, operandErr(v, op)
	}
	return n, nil
}

func intOperand(v Value, op opKind) (number, error) {
	n, err := numOperand(v, op)
	if err != nil {
		return n, err
	}
	if n.kind == kDouble {
		return n, errorf("can't use floating-point value as operand of %s", q(opNames[op]))
	}
	return n, nil
}

func unaryOp(op opKind, a Value) (Value, error) {
	if op == opNot {
		t, err := a.Truth()
		if err != nil {
			if _, ok := asNumber(a); !ok {
				return Empty, operandErr(a, op)
			}
			return Empty, err
		}
		return Bool(!t), nil
	}
	if op == opBitNot {
		n, err := intOperand(a, op)
		if err != nil {
			return Empty, err
		}
		if n.kind == kInt {
			return Int(^n.i), nil
		}
		return BigInt(new(big.Int).Not(n.b)), nil
	}
	n, err := numOperand(a, op)
	if err != nil {
		return Empty, err
	}
	if op == opPos {
		return n.value(), nil
	}
	switch n.kind {
	case kInt:
		if n.i == math.MinInt64 {
			return BigInt(new(big.Int).Neg(big.NewInt(n.i))), nil
		}
		return Int(-n.i), nil
	case kBig:
		return BigInt(new(big.Int).Neg(n.b)), nil
	}
	return Double(-n.f), nil
}

func binaryOp(op opKind, a, b Value) (Value, error) {
	switch op {
	case opStrEq:
		return Bool(a.String() == b.String()), nil
	case opStrNe:
		return Bool(a.String() != b.String()), nil
	case opContains:
		return Bool(strings.Contains(a.String(), b.String())), nil
	case opStarts:
		return Bool(strings.HasPrefix(a.String(), b.String())), nil
	case opEnds:
		return Bool(strings.HasSuffix(a.String(), b.String())), nil
	case opMatchGlob:
		return Bool(GlobMatch(b.String(), a.String(), false)), nil
	case opMatchRegex:
		re, err := compileRegexp(b.String(), false)
		if err != nil {
			return Empty, err
		}
		return Bool(re.MatchString(a.String())), nil
	case opIn, opNi:
		l, err := AsList(b)
		if err != nil {
			return Empty, err
		}
		s := a.String()
		found := false
		for _, e := range l {
			if e.String() == s {
				found = true
				break
			}
		}
		return Bool(found == (op == opIn)), nil
	case opEq, opNe, opLt, opGt, opLe, opGe:
		return compareOp(op, a, b)
	}
	x, err := numOperand(a, op)
	if err != nil {
		return Empty, err
	}
	y, err := numOperand(b, op)
	if err != nil {
		return Empty, err
	}
	switch op {
	case opMod, opShl, opShr, opBitAnd, opBitOr, opBitXor:
		if x.kind == kDouble {
			return Empty, errorf("can't use floating-point value as operand of %s", q(opNames[op]))
		}
		if y.kind == kDouble {
			return Empty, errorf("can't use floating-point value as operand of %s", q(opNames[op]))
		}
		return intBinary(op, x, y)
	}
	if x.kind == kDouble || y.kind == kDouble {
		return floatBinary(op, x.toFloat(), y.toFloat())
	}
	return intBinary(op, x, y)
}

func floatBinary(op opKind, x, y float64) (Value, error) {
	var r float64
	switch op {
	case opAdd:
		r = x + y
	case opSub:
		r = x - y
	case opMul:
		r = x * y
	case opDiv:
		if y == 0 {
			if x == 0 || math.IsNaN(x) {
				return Empty, errorf("domain error: argument not in valid range")
			}
			if (x > 0) != math.Signbit(y) {
				return Double(math.Inf(1)), nil
			}
			return Double(math.Inf(-1)), nil
		}
		r = x / y
	case opPow:
		if x == 0 && y < 0 {
			return Empty, errorf("exponentiation of zero by negative power")
		}
		r = math.Pow(x, y)
	}
	if math.IsNaN(r) {
		return Empty, errorf("domain error: argument not in valid range")
	}
	return Double(r), nil
}

func intBinary(op opKind, x, y number) (Value, error) {
	if x.kind == kInt && y.kind == kInt {
		a, b := x.i, y.i
		switch op {
		case opAdd:
			r := a + b
			if (r > a) == (b > 0) {
				return Int(r), nil
			}
		case opSub:
			r := a - b
			if (r < a) == (b > 0) {
				return Int(r), nil
			}
		case opMul:
			if a == 0 || b == 0 {
				return Int(0), nil
			}
			r := a * b
			if r/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64) {
				return Int(r), nil
			}
		case opDiv:
			if b == 0 {
				return Empty, errorf("divide by zero")
			}
			if !(a == math.MinInt64 && b == -1) {
				q := a / b
				if (a%b != 0) && ((a < 0) != (b < 0)) {
					q--
				}
				return Int(q), nil
			}
		case opMod:
			if b == 0 {
				return Empty, errorf("divide by zero")
			}
			if b == -1 {
				return Int(0), nil
			}
			m := a % b
			if m != 0 && ((m < 0) != (b < 0)) {
				m += b
			}
			return Int(m), nil
		case opBitAnd:
			return Int(a & b), nil
		case opBitOr:
			return Int(a | b), nil
		case opBitXor:
			return Int(a ^ b), nil
		case opShr:
			if b < 0 {
				return Empty, errorf("negative shift argument")
			}
			if b > 63 {
				if a < 0 {
					return Int(-1), nil
				}
				return Int(0), nil
			}
			return Int(a >> uint(b)), nil
		case opShl:
			if b < 0 {
				return Empty, errorf("negative shift argument")
			}
			if b < 63 {
				r := a << uint(b)
				if r>>uint(b) == a {
					return Int(r), nil
				}
			}
		case opPow:
			return intPow(x, y)
		}
	}
	// big integer path
	A, B := x.toBig(), y.toBig()
	r := new(big.Int)
	switch op {
	case opAdd:
		r.Add(A, B)
	case opSub:
		r.Sub(A, B)
	case opMul:
		if A.BitLen()+B.BitLen() > maxIntBits+1 {
			return Empty, errorf("integer value too large to represent")
		}
		r.Mul(A, B)
	case opDiv, opMod:
		if B.Sign() == 0 {
			return Empty, errorf("divide by zero")
		}
		q, m := new(big.Int).QuoRem(A, B, new(big.Int))
		if m.Sign() != 0 && (m.Sign() < 0) != (B.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
			m.Add(m, B)
		}
		if op == opDiv {
			return BigInt(q), nil
		}
		return BigInt(m), nil
	case opBitAnd:
		r.And(A, B)
	case opBitOr:
		r.Or(A, B)
	case opBitXor:
		r.Xor(A, B)
	case opShl, opShr:
		if B.Sign() < 0 {
			return Empty, errorf("negative shift argument")
		}
		if !B.IsInt64() || B.Int64() > maxIntBits {
			if op == opShr {
				if A.Sign() < 0 {
					return Int(-1), nil
				}
				return Int(0), nil
			}
			return Empty, errorf("integer value too large to represent")
		}
		if op == opShl {
			r.Lsh(A, uint(B.Int64()))
		} else {
			r.Rsh(A, uint(B.Int64()))
		}
	case opPow:
		return intPow(x, y)
	}
	return BigInt(r), nil
}

func intPow(x, y number) (Value, error) {
	A, B := x.toBig(), y.toBig()
	// Bases of -1, 0 and 1 take any exponent, as in tclsh.
	if A.CmpAbs(big.NewInt(1)) <= 0 {
		switch {
		case A.Sign() == 0 && B.Sign() < 0:
			return Empty, errorf("exponentiation of zero by negative power")
		case A.Sign() == 0 && B.Sign() > 0:
			return Int(0), nil
		case A.Sign() < 0 && B.Bit(0) == 1:
			return Int(-1), nil
		}
		return Int(1), nil
	}
	if B.Sign() < 0 {
		return Int(0), nil
	}
	// At least (bits of A - 1) × B bits: refused past maxIntBits before
	// any is computed.
	if !B.IsInt64() || B.Int64() > 1<<16 || int64(A.BitLen()-1)*B.Int64() > maxIntBits {
		return Empty, errorf("exponent too large")
	}
	return BigInt(new(big.Int).Exp(A, B, nil)), nil
}

// maxIntBits bounds the integers that a shift, a power or a product
// makes, about 315,000 decimal digits, and maxNumberLen the strings
// read as numbers (longer ones are not numbers here): tclsh takes any
// that fits in memory, and one expr of an iRule could then hold its
// event loop for seconds or minutes (a 6,000-digit number to the power
// 10,000 took 12 s; squaring a number 28 times, or reading a number of
// 16 million digits, had not ended after three minutes) where the
// interpreter's step budget cannot stop it, as each is one step.
const (
	maxIntBits   = 1 << 20
	maxNumberLen = maxIntBits / 3
)

func compareOp(op opKind, a, b Value) (Value, error) {
	x, okx := asNumber(a)
	y, oky := asNumber(b)
	var c int
	if okx && oky {
		c = cmpNumbers(x, y)
		if c == 2 { // NaN
			return Bool(op == opNe), nil
		}
	} else {
		c = strings.Compare(a.String(), b.String())
	}
	switch op {
	case opEq:
		return Bool(c == 0), nil
	case opNe:
		return Bool(c != 0), nil
	case opLt:
		return Bool(c < 0), nil
	case opGt:
		return Bool(c > 0), nil
	case opLe:
		return Bool(c <= 0), nil
	}
	return Bool(c >= 0), nil
}

// cmpNumbers returns -1, 0, 1, or 2 when a NaN is involved.
func cmpNumbers(x, y number) int {
	if x.kind == kInt && y.kind == kInt {
		switch {
		case x.i < y.i:
			return -1
		case x.i > y.i:
			return 1
		}
		return 0
	}
	if x.kind == kDouble || y.kind == kDouble {
		if x.kind == kDouble && math.IsNaN(x.f) || y.kind == kDouble && math.IsNaN(y.f) {
			return 2
		}
		if x.kind != kDouble || y.kind != kDouble {
			// compare exactly when mixing big integers and doubles
			var bf, ff *big.Float
			if x.kind == kDouble {
				if math.IsInf(x.f, 0) {
					return int(math.Copysign(1, x.f))
				}
				bf, ff = new(big.Float).SetInt(y.toBig()), big.NewFloat(x.f)
				return ff.Cmp(bf)
			}
			if math.IsInf(y.f, 0) {
				return -int(math.Copysign(1, y.f))
			}
			bf, ff = new(big.Float).SetInt(x.toBig()), big.NewFloat(y.f)
			return bf.Cmp(ff)
		}
		switch {
		case x.f < y.f:
			return -1
		case x.f > y.f:
			return 1
		}
		return 0
	}
	return x.toBig().Cmp(y.toBig())
}

var mathFuncs = map[string]bool{
	"abs": true, "acos": true, "asin": true, "atan": true, "atan2": true, "bool": true, "ceil": true,
	"cos": true, "cosh": true, "double": true, "entier": true, "exp": true, "floor": true, "fmod": true,
	"hypot": true, "int": true, "isqrt": true, "log": true, "log10": true, "max": true, "min": true,
	"pow": true, "rand": true, "round": true, "sin": true, "sinh": true, "sqrt": true, "srand": true,
	"tan": true, "tanh": true, "wide": true,
}

var mathArity = map[string]int{"atan2": 2, "fmod": 2, "hypot": 2, "pow": 2, "rand": 0, "max": -1, "min": -1}

func (in *Interp) callMath(name string, args []Value) (Value, error) {
	want, ok := mathArity[name]
	if !ok {
		want = 1
	}
	if want >= 0 && len(args) != want {
		if len(args) < want {
			return Empty, errorf("too few arguments for math function %s", q(name))
		}
		return Empty, errorf("too many arguments for math function %s", q(name))
	}
	if want < 0 && len(args) == 0 {
		return Empty, errorf("too few arguments to math function %s", q(name))
	}
	nums := make([]number, len(args))
	for i, a := range args {
		if name == "bool" {
			break
		}
		n, ok := asNumber(a)
		if !ok {
			if a.String() == "" {
				return Empty, errorf("expected floating-point number but got \"\"")
			}
			return Empty, errorf("expected floating-point number but got %s", q(a.String()))
		}
		nums[i] = n
	}
	f1 := func(fn func(float64) float64) (Value, error) {
		r := fn(nums[0].toFloat())
		if math.IsNaN(r) {
			return Empty, errorf("domain error: argument not in valid range")
		}
		return Double(r), nil
	}
	switch name {
	case "abs":
		n := nums[0]
		switch n.kind {
		case kInt:
			if n.i < 0 {
				return unaryOp(opNeg, Int(n.i))
			}
			return Int(n.i), nil
		case kBig:
			return BigInt(new(big.Int).Abs(n.b)), nil
		}
		return Double(math.Abs(n.f)), nil
	case "bool":
		t, err := args[0].Truth()
		return Bool(t), err
	case "double":
		return Double(nums[0].toFloat()), nil
	case "int", "wide":
		b, err := toEntier(nums[0])
		if err != nil {
			return Empty, err
		}
		return Int(truncate64(b)), nil
	case "entier":
		b, err := toEntier(nums[0])
		if err != nil {
			return Empty, err
		}
		return BigInt(b), nil
	case "round":
		n := nums[0]
		if n.kind != kDouble {
			return n.value(), nil
		}
		if math.IsInf(n.f, 0) || math.IsNaN(n.f) {
			return Empty, errorf("integer value too large to represent")
		}
		r := math.Round(n.f)
		b, _ := new(big.Float).SetFloat64(r).Int(nil)
		return BigInt(b), nil
	case "ceil":
		return f1(math.Ceil)
	case "floor":
		return f1(math.Floor)
	case "sqrt":
		return f1(math.Sqrt)
	case "exp":
		return f1(math.Exp)
	case "log":
		return f1(math.Log)
	case "log10":
		return f1(math.Log10)
	case "sin":
		return f1(math.Sin)
	case "cos":
		return f1(math.Cos)
	case "tan":
		return f1(math.Tan)
	case "asin":
		return f1(math.Asin)
	case "acos":
		return f1(math.Acos)
	case "atan":
		return f1(math.Atan)
	case "sinh":
		return f1(math.Sinh)
	case "cosh":
		return f1(math.Cosh)
	case "tanh":
		return f1(math.Tanh)
	case "isqrt":
		b, err := toEntier(nums[0])
		if err != nil {
			return Empty, err
		}
		if b.Sign() < 0 {
			return Empty, errorf("square root of negative argument")
		}
		return BigInt(new(big.Int).Sqrt(b)), nil
	case "atan2", "fmod", "hypot", "pow":
		x, y := nums[0].toFloat(), nums[1].toFloat()
		var r float64
		switch name {
		case "atan2":
			r = math.Atan2(x, y)
		case "fmod":
			if y == 0 {
				return Empty, errorf("domain error: argument not in valid range")
			}
			r = math.Mod(x, y)
		case "hypot":
			r = math.Hypot(x, y)
		case "pow":
			r = math.Pow(x, y)
		}
		if math.IsNaN(r) {
			return Empty, errorf("domain error: argument not in valid range")
		}
		return Double(r), nil
	case "max", "min":
		best := 0
		for i := 1; i < len(nums); i++ {
			c := cmpNumbers(nums[i], nums[best])
			if name == "max" && c == 1 || name == "min" && c == -1 {
				best = i
			}
		}
		return nums[best].value(), nil
	case "rand":
		in.seed = in.seed*6364136223846793005 + 1442695040888963407
		return Double(float64(in.seed>>11) / (1 << 53)), nil
	case "srand":
		b, err := toEntier(nums[0])
		if err != nil {
			return Empty, err
		}
		in.seed = uint64(truncate64(b))
		return in.callMath("rand", nil)
	}
	return Empty, errorf("unknown math function %s", q(name))
}

func toEntier(n number) (*big.Int, error) {
	switch n.kind {
	case kInt:
		return big.NewInt(n.i), nil
	case kBig:
		return n.b, nil
	}
	if math.IsInf(n.f, 0) || math.IsNaN(n.f) {
		return nil, errorf("integer value too large to represent")
	}
	b, _ := new(big.Float).SetFloat64(math.Trunc(n.f)).Int(nil)
	return b, nil
}

func truncate64(b *big.Int) int64 {
	if b.IsInt64() {
		return b.Int64()
	}
	m := new(big.Int).And(b, new(big.Int).SetUint64(math.MaxUint64))
	return int64(m.Uint64())
}

// ExprString is a convenience for tests: evaluate an expression string.
func (in *Interp) ExprString(s string) (string, error) {
	v, err := in.EvalExpr(Str(s))
	if err != nil {
		return "", err
	}
	return v.String(), nil
}

var _ = fmt.Sprintf
