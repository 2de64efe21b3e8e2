package suite

import (
	"fmt"
	"strings"
)

// Expr is a parsed expression with its source text.
type Expr struct {
	Text string
	root node
}

// String returns the source text.
func (e *Expr) String() string {
	if e == nil {
		return ""
	}
	return e.Text
}

type node interface{ offset() int }

type numLit struct {
	v   float64
	off int
}

type strLit struct {
	s   string
	off int
}

// ref names a metric or a parameter: name[arg]{param=label,...}.
type ref struct {
	name   string
	arg    string
	hasArg bool
	sel    []selItem
	off    int
	argOff int
}

type selItem struct {
	param, label string
	off          int
}

type call struct {
	fn   string
	args []node
	off  int
}

type unary struct {
	op  string
	x   node
	off int
}

type binary struct {
	op   string
	l, r node
	off  int
}

func (n *numLit) offset() int { return n.off }
func (n *strLit) offset() int { return n.off }
func (n *ref) offset() int    { return n.off }
func (n *call) offset() int   { return n.off }
func (n *unary) offset() int  { return n.off }
func (n *binary) offset() int { return n.off }

// parseExpr parses an expression; the error carries a byte offset.
func parseExpr(s string) (*Expr, *exprError) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	root, perr := p.or()
	if perr != nil {
		return nil, perr
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, &exprError{off: t.off, msg: fmt.Sprintf("unexpected %q after a complete expression", tokText(t))}
	}
	return &Expr{Text: s, root: root}, nil
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) isOp(ops ...string) (token, bool) {
	t := p.peek()
	if t.kind != tOp {
		return t, false
	}
	for _, o := range ops {
		if t.text == o {
			return t, true
		}
	}
	return t, false
}

func tokText(t token) string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tArg:
		return "[" + t.text + "]"
	case tSel:
		return "{" + t.text + "}"
	case tStr:
		return `"` + t.text + `"`
	}
	return t.text
}

func (p *parser) binaryLevel(next func() (node, *exprError), ops ...string) (node, *exprError) {
	l, err := next()
	if err != nil {
		return nil, err
	}
	for {
		t, ok := p.isOp(ops...)
		if !ok {
			return l, nil
		}
		p.next()
		r, err := next()
		if err != nil {
			return nil, err
		}
		l = &binary{op: t.text, l: l, r: r, off: t.off}
	}
}

func (p *parser) or() (node, *exprError)  { return p.binaryLevel(p.and, "or") }
func (p *parser) and() (node, *exprError) { return p.binaryLevel(p.not, "and") }

func (p *parser) not() (node, *exprError) {
	if t, ok := p.isOp("not"); ok {
		p.next()
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return &unary{op: "not", x: x, off: t.off}, nil
	}
	return p.compare()
}

func (p *parser) compare() (node, *exprError) {
	l, err := p.sum()
	if err != nil {
		return nil, err
	}
	if t, ok := p.isOp("<", "<=", ">", ">=", "==", "!="); ok {
		p.next()
		r, err := p.sum()
		if err != nil {
			return nil, err
		}
		if t2, ok := p.isOp("<", "<=", ">", ">=", "==", "!="); ok {
			return nil, &exprError{off: t2.off, msg: "comparisons do not chain: write a <= b and b <= c"}
		}
		return &binary{op: t.text, l: l, r: r, off: t.off}, nil
	}
	return l, nil
}

func (p *parser) sum() (node, *exprError)     { return p.binaryLevel(p.product, "+", "-") }
func (p *parser) product() (node, *exprError) { return p.binaryLevel(p.neg, "*", "/") }

func (p *parser) neg() (node, *exprError) {
	if t, ok := p.isOp("-"); ok {
		p.next()
		x, err := p.neg()
		if err != nil {
			return nil, err
		}
		return &unary{op: "-", x: x, off: t.off}, nil
	}
	return p.primary()
}

func (p *parser) primary() (node, *exprError) {
	t := p.next()
	switch t.kind {
	case tNum:
		return &numLit{v: t.num, off: t.off}, nil
	case tStr:
		return &strLit{s: t.text, off: t.off}, nil
	case tIdent:
		if _, ok := p.isOp("("); ok {
			return p.call(t)
		}
		return p.ref(t)
	case tOp:
		if t.text == "(" {
			x, err := p.or()
			if err != nil {
				return nil, err
			}
			if c := p.next(); c.kind != tOp || c.text != ")" {
				return nil, &exprError{off: c.off, msg: fmt.Sprintf("expected \")\", got %q", tokText(c))}
			}
			return x, nil
		}
	}
	return nil, &exprError{off: t.off, msg: fmt.Sprintf("expected a number, a name or \"(\", got %q", tokText(t))}
}

func (p *parser) call(name token) (node, *exprError) {
	p.next() // (
	c := &call{fn: name.text, off: name.off}
	if _, ok := p.isOp(")"); ok {
		p.next()
		return c, nil
	}
	for {
		a, err := p.or()
		if err != nil {
			return nil, err
		}
		c.args = append(c.args, a)
		t := p.next()
		if t.kind == tOp && t.text == ")" {
			return c, nil
		}
		if t.kind != tOp || t.text != "," {
			return nil, &exprError{off: t.off, msg: fmt.Sprintf("expected \",\" or \")\" in the arguments of %s, got %q", c.fn, tokText(t))}
		}
	}
}

func (p *parser) ref(name token) (node, *exprError) {
	r := &ref{name: name.text, off: name.off}
	if t := p.peek(); t.kind == tArg {
		p.next()
		r.arg, r.hasArg, r.argOff = strings.TrimSpace(t.text), true, t.off
		if r.arg == "" {
			return nil, &exprError{off: t.off, msg: "empty [ ]: name a flow, a link (a->b) or node:name"}
		}
	}
	if t := p.peek(); t.kind == tSel {
		p.next()
		off := t.off
		for _, part := range strings.Split(t.text, ",") {
			lead := len(part) - len(strings.TrimLeft(part, " "))
			k, v, ok := strings.Cut(part, "=")
			if !ok || strings.TrimSpace(k) == "" || strings.TrimSpace(v) == "" {
				return nil, &exprError{off: off + lead, msg: fmt.Sprintf("selector %q: want param=label", strings.TrimSpace(part))}
			}
			r.sel = append(r.sel, selItem{param: strings.TrimSpace(k), label: strings.TrimSpace(v), off: off + lead})
			off += len(part) + 1
		}
	}
	return r, nil
}

// walk calls fn for every node of the tree, parents first.
func walk(n node, fn func(node)) {
	if n == nil {
		return
	}
	fn(n)
	switch x := n.(type) {
	case *call:
		for _, a := range x.args {
			walk(a, fn)
		}
	case *unary:
		walk(x.x, fn)
	case *binary:
		walk(x.l, fn)
		walk(x.r, fn)
	}
}
