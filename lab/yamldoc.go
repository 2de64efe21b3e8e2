package lab

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/units"
)

// The builder writes a topology file and loads it with topo, so a Topology
// obeys exactly the rules (and gets exactly the messages) a YAML file
// does. The document is built as ordered mappings whose entries remember
// the builder call that set them; it is rendered with every node, link and
// top-level setting on a line of its own, so the line of a problem topo
// reports names the call to blame.

// mapping is an ordered YAML mapping. Keys may repeat: a key set twice is
// a duplicate in the document, which topo reports.
type mapping struct{ entries []*entry }

// entry is one key (empty in a list item) with its value: a string, a
// plain scalar, a list or a *mapping.
type entry struct {
	key  string
	val  any
	call string // the builder call that made it
}

// plain is a scalar written as is: numbers and booleans.
type plain string

// list is a YAML sequence; its items are values like entry.val.
type list []any

// child returns the mapping under key, making it (blamed on call) when
// absent.
func (m *mapping) child(key, call string) *mapping {
	for _, e := range m.entries {
		if sub, ok := e.val.(*mapping); ok && e.key == key {
			return sub
		}
	}
	sub := &mapping{}
	m.entries = append(m.entries, &entry{key: key, val: sub, call: call})
	return sub
}

// set adds key = val at path below m, making the mappings on the way.
func (m *mapping) set(path []string, val any, call string) {
	for _, k := range path[:len(path)-1] {
		m = m.child(k, call)
	}
	m.entries = append(m.entries, &entry{key: path[len(path)-1], val: val, call: call})
}

// add appends item to the list at path below m, making it when absent.
func (m *mapping) add(path []string, item any, call string) {
	for _, k := range path[:len(path)-1] {
		m = m.child(k, call)
	}
	key := path[len(path)-1]
	for _, e := range m.entries {
		if l, ok := e.val.(list); ok && e.key == key {
			e.val = append(l, item)
			return
		}
	}
	m.entries = append(m.entries, &entry{key: key, val: list{item}, call: call})
}

// value converts a Go value to a document value: the unit types in the
// syntax their parsers read back exactly (10mbit, 1.5ms, 0.5%), numbers
// and booleans plain, slices as lists, maps as mappings in key order.
func value(v any) any {
	switch x := v.(type) {
	case nil:
		return plain("null")
	case string, plain, list, *mapping:
		return x
	case units.BitRate:
		return x.String()
	case units.Percent:
		return x.String()
	case time.Duration:
		return units.FormatDuration(x)
	case units.Bytes:
		return strconv.FormatInt(int64(x), 10) + "b"
	case bool:
		return plain(strconv.FormatBool(x))
	case float32:
		return plain(strconv.FormatFloat(float64(x), 'g', -1, 32))
	case float64:
		return plain(strconv.FormatFloat(x, 'g', -1, 64))
	case fmt.Stringer:
		return x.String()
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return plain(strconv.FormatInt(rv.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return plain(strconv.FormatUint(rv.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		return plain(strconv.FormatFloat(rv.Float(), 'g', -1, 64))
	case reflect.String:
		return rv.String()
	case reflect.Bool:
		return plain(strconv.FormatBool(rv.Bool()))
	case reflect.Slice, reflect.Array:
		l := make(list, rv.Len())
		for i := range l {
			l[i] = value(rv.Index(i).Interface())
		}
		return l
	case reflect.Map:
		m := &mapping{}
		keys := rv.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			m.entries = append(m.entries, &entry{key: fmt.Sprint(k), val: value(rv.MapIndex(k).Interface())})
		}
		return m
	}
	// anything else is written as text; topo says what it expected
	return fmt.Sprint(v)
}

// render writes the document: top-level mappings in block style with one
// line per entry, lists in block style with one line per item, the rest
// of each line in flow style. It returns the text and, per line (index 0
// is line 1), the call to blame for it.
func render(doc *mapping) ([]byte, []string) {
	var b strings.Builder
	var calls []string
	line := func(call, format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
		calls = append(calls, call)
	}
	for _, e := range doc.entries {
		switch v := e.val.(type) {
		case *mapping:
			if len(v.entries) == 0 {
				line(e.call, "%s: {}", quote(e.key))
				continue
			}
			line(e.call, "%s:", quote(e.key))
			for _, c := range v.entries {
				line(c.call, "  %s: %s", quote(c.key), flow(c.val))
			}
		case list:
			// the list's items carry their calls as entries
			if len(v) == 0 {
				line(e.call, "%s: []", quote(e.key))
				continue
			}
			line(e.call, "%s:", quote(e.key))
			for _, it := range v {
				if ie, ok := it.(*entry); ok {
					line(ie.call, "  - %s", flow(ie.val))
				} else {
					line(e.call, "  - %s", flow(it))
				}
			}
		default:
			line(e.call, "%s: %s", quote(e.key), flow(e.val))
		}
	}
	return []byte(b.String()), calls
}

// flow renders a value on one line: strings double-quoted (Go's escapes
// are a subset of YAML's), plain scalars as is, [lists] and {mappings}.
func flow(v any) string {
	switch x := v.(type) {
	case string:
		return quote(x)
	case plain:
		return string(x)
	case list:
		parts := make([]string, len(x))
		for i, it := range x {
			parts[i] = flow(it)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *mapping:
		parts := make([]string, len(x.entries))
		for i, e := range x.entries {
			parts[i] = quote(e.key) + ": " + flow(e.val)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case *entry:
		return flow(x.val)
	}
	return quote(fmt.Sprint(v))
}

// quote renders s as a YAML string: plain where that cannot be read as
// anything else (h1, 10mbit, 10.0.0.1/24, a->b), else double-quoted (Go's
// escapes are a subset of YAML's).
func quote(s string) string {
	if plainSafe(s) {
		return s
	}
	return strconv.Quote(s)
}

var plainRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./%>+-]*$`)

// plainSafe reports whether s, written plain, is read back as the string
// s: no indicator or flow character, and not a number, boolean or null
// in YAML 1.1 or 1.2.
func plainSafe(s string) bool {
	if !plainRe.MatchString(s) {
		return false
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null":
		return false
	}
	if _, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, 64); err == nil {
		return false
	}
	if _, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64); err == nil {
		return false
	}
	return strings.ContainsAny(strings.ToLower(s), "abcdefghijklmnopqrstuvwxyz%/")
}
