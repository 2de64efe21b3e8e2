package expr

import (
	"fmt"
	"strings"
)

// Expr is a parsed expression with its source text.
type Expr struct {
	Text string
	Root Node
}

// String returns the source text.
func (e *Expr) String() string {
	if e == nil {
		return ""
	}
	return e.Text
}

type Node interface{ Offset() int }

type NumLit struct {
	V   float64
	Off int
}

type StrLit struct {
	S   string
	Off int
}

// Ref names a metric or a parameter: name[arg]{param=label,...}.
type Ref struct {
	Name   string
	Arg    string
	HasArg bool
	Sel    []SelItem
	Off    int
	ArgOff int
}

type SelItem struct {
	Param, Label string
	Off          int
}

type Call struct {
	Fn   string
	Args []Node
	Off  int
}

type Unary struct {
	Op  string
	X   Node
	Off int
}

type Binary struct {
	Op   string
	L, R Node
	Off  int
}

func (n *NumLit) Offset() int { return n.Off }
func (n *StrLit) Offset() int { return n.Off }
func (n *Ref) Offset() int    { return n.Off }
func (n *Call) Offset() int   { return n.Off }
func (n *Unary) Offset() int  { return n.Off }
func (n *Binary) Offset() int { return n.Off }

// Parse parses an expression; the error carries a byte offset.
func Parse(s string) (*Expr, *Error) {
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
		return nil, &Error{Off: t.off, Msg: fmt.Sprintf("unexpected %q after a complete expression", tokText(t))}
	}
	return &Expr{Text: s, Root: root}, nil
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

func (p *parser) binaryLevel(next func() (Node, *Error), ops ...string) (Node, *Error) {
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
		l = &Binary{Op: t.text, L: l, R: r, Off: t.off}
	}
}

func (p *parser) or() (Node, *Error)  { return p.binaryLevel(p.and, "or") }
func (p *parser) and() (Node, *Error) { return p.binaryLevel(p.not, "and") }

func (p *parser) not() (Node, *Error) {
	if t, ok := p.isOp("not"); ok {
		p.next()
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return &Unary{Op: "not", X: x, Off: t.off}, nil
	}
	return p.compare()
}

func (p *parser) compare() (Node, *Error) {
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
			return nil, &Error{Off: t2.off, Msg: "comparisons do not chain: write a <= b and b <= c"}
		}
		return &Binary{Op: t.text, L: l, R: r, Off: t.off}, nil
	}
	return l, nil
}

func (p *parser) sum() (Node, *Error)     { return p.binaryLevel(p.product, "+", "-") }
func (p *parser) product() (Node, *Error) { return p.binaryLevel(p.neg, "*", "/") }

func (p *parser) neg() (Node, *Error) {
	if t, ok := p.isOp("-"); ok {
		p.next()
		x, err := p.neg()
		if err != nil {
			return nil, err
		}
		return &Unary{Op: "-", X: x, Off: t.off}, nil
	}
	return p.primary()
}

func (p *parser) primary() (Node, *Error) {
	t := p.next()
	switch t.kind {
	case tNum:
		return &NumLit{V: t.num, Off: t.off}, nil
	case tStr:
		return &StrLit{S: t.text, Off: t.off}, nil
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
				return nil, &Error{Off: c.off, Msg: fmt.Sprintf("expected \")\", got %q", tokText(c))}
			}
			return x, nil
		}
	}
	return nil, &Error{Off: t.off, Msg: fmt.Sprintf("expected a number, a name or \"(\", got %q", tokText(t))}
}

func (p *parser) call(name token) (Node, *Error) {
	p.next() // (
	c := &Call{Fn: name.text, Off: name.off}
	if _, ok := p.isOp(")"); ok {
		p.next()
		return c, nil
	}
	for {
		a, err := p.or()
		if err != nil {
			return nil, err
		}
		c.Args = append(c.Args, a)
		t := p.next()
		if t.kind == tOp && t.text == ")" {
			return c, nil
		}
		if t.kind != tOp || t.text != "," {
			return nil, &Error{Off: t.off, Msg: fmt.Sprintf("expected \",\" or \")\" in the arguments of %s, got %q", c.Fn, tokText(t))}
		}
	}
}

func (p *parser) ref(name token) (Node, *Error) {
	r := &Ref{Name: name.text, Off: name.off}
	if t := p.peek(); t.kind == tArg {
		p.next()
		r.Arg, r.HasArg, r.ArgOff = strings.TrimSpace(t.text), true, t.off
		if r.Arg == "" {
			return nil, &Error{Off: t.off, Msg: "empty [ ]: name a flow, a link (a->b) or node:name"}
		}
	}
	if t := p.peek(); t.kind == tSel {
		p.next()
		off := t.off
		for _, part := range strings.Split(t.text, ",") {
			lead := len(part) - len(strings.TrimLeft(part, " "))
			k, v, ok := strings.Cut(part, "=")
			if !ok || strings.TrimSpace(k) == "" || strings.TrimSpace(v) == "" {
				return nil, &Error{Off: off + lead, Msg: fmt.Sprintf("selector %q: want param=label", strings.TrimSpace(part))}
			}
			r.Sel = append(r.Sel, SelItem{Param: strings.TrimSpace(k), Label: strings.TrimSpace(v), Off: off + lead})
			off += len(part) + 1
		}
	}
	return r, nil
}

// Walk calls fn for every node of the tree, parents first.
func Walk(n Node, fn func(Node)) {
	if n == nil {
		return
	}
	fn(n)
	switch x := n.(type) {
	case *Call:
		for _, a := range x.Args {
			Walk(a, fn)
		}
	case *Unary:
		Walk(x.X, fn)
	case *Binary:
		Walk(x.L, fn)
		Walk(x.R, fn)
	}
}
