package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/emuctl/emuctl/units"
)

type tokKind int

const (
	tEOF tokKind = iota
	tNum
	tStr
	tIdent
	tArg // [ ... ] right after an identifier
	tSel // { ... } right after an identifier or an argument
	tOp
)

type token struct {
	kind tokKind
	text string
	num  float64
	off  int // byte offset in the expression
}

// lex splits an expression into tokens; errors carry the byte offset.
func lex(s string) ([]token, *Error) {
	var out []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' ||
				(s[j] == 'e' || s[j] == 'E') && j+1 < len(s) && (s[j+1] >= '0' && s[j+1] <= '9' || s[j+1] == '-' || s[j+1] == '+')) {
				if s[j] == 'e' || s[j] == 'E' {
					j++
				}
				j++
			}
			k := j
			for k < len(s) && (isLetter(s[k]) || s[k] == '%' || s[k] == 0xc2 || s[k] == 0xb5) {
				k++
			}
			v, err := numberWithUnit(s[i:j], s[j:k])
			if err != nil {
				return nil, &Error{Off: i, Msg: err.Error()}
			}
			out = append(out, token{kind: tNum, text: s[i:k], num: v, off: i})
			i = k
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return nil, &Error{Off: i, Msg: "unterminated string (a closing \" is missing)"}
			}
			out = append(out, token{kind: tStr, text: s[i+1 : i+1+j], off: i})
			i += j + 2
		case isLetter(c) || c == '_':
			j := i
			for j < len(s) && (isLetter(s[j]) || s[j] == '_' || s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			word := s[i:j]
			switch word {
			case "and", "or", "not":
				out = append(out, token{kind: tOp, text: word, off: i})
			default:
				out = append(out, token{kind: tIdent, text: word, off: i})
			}
			i = j
		case c == '[' || c == '{':
			if len(out) == 0 || out[len(out)-1].kind != tIdent && out[len(out)-1].kind != tArg {
				return nil, &Error{Off: i, Msg: fmt.Sprintf("%q must follow a metric name", string(c))}
			}
			closer := map[byte]byte{'[': ']', '{': '}'}[c]
			j := strings.IndexByte(s[i+1:], closer)
			if j < 0 {
				return nil, &Error{Off: i, Msg: fmt.Sprintf("unclosed %q", string(c))}
			}
			kind := tArg
			if c == '{' {
				kind = tSel
			}
			out = append(out, token{kind: kind, text: s[i+1 : i+1+j], off: i + 1})
			i += j + 2
		default:
			raw := ""
			for _, o := range []string{"<=", ">=", "==", "!=", "&&", "||", "<", ">", "+", "-", "*", "/", "(", ")", ",", "!"} {
				if strings.HasPrefix(s[i:], o) {
					raw = o
					break
				}
			}
			if raw == "" {
				return nil, &Error{Off: i, Msg: fmt.Sprintf("unexpected character %q", string(rune(c)))}
			}
			op := map[string]string{"&&": "and", "||": "or", "!": "not"}[raw]
			if op == "" {
				op = raw
			}
			out = append(out, token{kind: tOp, text: op, off: i})
			i += len(raw)
		}
	}
	return append(out, token{kind: tEOF, off: len(s)}), nil
}

func isLetter(c byte) bool { return c < 0x80 && unicode.IsLetter(rune(c)) }

// numberWithUnit converts "5" + "%" and friends to expression units.
func numberWithUnit(num, unit string) (float64, error) {
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", num)
	}
	if unit == "" {
		return v, nil
	}
	return unitValue(num+unit, v, unit)
}

// unitValue converts a number with a unit (text is the whole literal).
func unitValue(text string, v float64, unit string) (float64, error) {
	if unit == "%" {
		return v / 100, nil
	}
	lu := strings.ToLower(unit)
	if strings.HasSuffix(lu, "bit") {
		bps, err := units.ParseBitRate(text)
		if err != nil {
			return 0, err
		}
		return bps.Mbps(), nil
	}
	if d, err := units.ParseDuration(text); err == nil {
		return float64(d) / float64(time.Millisecond), nil
	}
	if d, err := time.ParseDuration(text); err == nil {
		return float64(d) / float64(time.Millisecond), nil
	}
	return 0, fmt.Errorf("unknown unit %q in %q (valid: %%, ns, us, ms, s, bit, kbit, mbit, gbit)", unit, text)
}

// ScalarNumber reads a parameter value such as "5%", "54mbit", "2ms",
// "true" or "100" as an expression number; ok is false for other text.
func ScalarNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "true", "on", "yes":
		return 1, true
	case "false", "off", "no":
		return 0, true
	}
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == '-' || s[i] == '+' || s[i] == 'e' && i > 0) {
		i++
	}
	if i == 0 {
		return 0, false
	}
	v, err := numberWithUnit(s[:i], s[i:])
	if err != nil || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// Error is a problem at a byte offset of an expression.
type Error struct {
	Off int
	Msg string
}

func (e *Error) Error() string { return e.Msg }
