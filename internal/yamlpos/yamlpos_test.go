package yamlpos

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// collect decodes with a Decoder whose problems are "line:col: path: msg".
func collect() (*Decoder, *[]string) {
	var out []string
	return New(func(line, col int, path, msg string) {
		out = append(out, fmt.Sprintf("%d:%d: %s: %s", line, col, path, msg))
	}), &out
}

var doc = Doc{Kind: "thing", Needs: "a things: list", Keys: []string{"things", "name"}}

func TestParseProblems(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "0:0: : file is empty: a thing needs a things: list"},
		{"  \n", "0:0: : file is empty: a thing needs a things: list"},
		{"a: [1, 2\nb: 3\n", "2:0: : YAML syntax error: did not find expected ',' or ']' in the value that starts on this line"},
		{"a: 1\n---\nb: 2\n", "2:1: : a second YAML document starts here: put one thing per file"},
		{"a: *nope\n", "1:4: : alias *nope refers to no anchor: define &nope before using it"},
		{"- 1\n- 2\n", "1:1: : the document must be a mapping with keys things, name, got a list"},
	} {
		d, out := collect()
		if root := d.Parse([]byte(c.in), doc); root != nil || len(*out) != 1 || (*out)[0] != c.want {
			t.Errorf("Parse(%q) = %v, problems %q; want %q", c.in, root, *out, c.want)
		}
	}
	// an alias bomb is refused at the node that passes the bound
	var b strings.Builder
	b.WriteString("a: &a [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 'b'; i <= 'h'; i++ {
		fmt.Fprintf(&b, "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	d, out := collect()
	if d.Parse([]byte(b.String()), Doc{Kind: "thing", MaxExpanded: 1000}) != nil || len(*out) != 1 || !strings.Contains((*out)[0], "more than 1000 YAML nodes") {
		t.Errorf("alias bomb: %q", *out)
	}
	d, out = collect()
	if root := d.Parse([]byte("name: x\nthings: [1]\n"), doc); root == nil || len(*out) != 0 || root.Kind != yaml.MappingNode {
		t.Errorf("a good document: %v %q", root, *out)
	}
}

func TestEntries(t *testing.T) {
	d, out := collect()
	root := d.Parse([]byte(`base: &b {rate: 1mbit, delay: 5ms}
link:
  <<: *b
  delay: 10ms
  delay: 20ms
  colour: red
`), Doc{Kind: "thing"})
	var got []string
	for _, e := range d.Entries(root, "") {
		if e.Key == "link" {
			for _, f := range d.Fields(e.V, "link", []string{"rate", "delay"}) {
				got = append(got, f.Key+"="+f.V.Value)
			}
		}
	}
	if strings.Join(got, " ") != "delay=10ms rate=1mbit" {
		t.Errorf("entries %q: explicit keys first and winning, then merged ones", got)
	}
	want := []string{
		`5:3: link.delay: duplicate key "delay" (first at line 4): each key may appear once`,
		`6:3: link: unknown key "colour" (valid: rate, delay)`,
	}
	if strings.Join(*out, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(*out, "\n"), strings.Join(want, "\n"))
	}
}

func TestValues(t *testing.T) {
	d, out := collect()
	root := d.Parse([]byte(`b: yes
t: true
i: "3"
j: 7
k: 70
dur: 250ms
dnu: 10
p: 5%
w: [a, b]
o: reen
`), Doc{Kind: "thing"})
	v := map[string]*yaml.Node{}
	for _, e := range d.Entries(root, "") {
		v[e.Key] = e.V
	}
	if _, ok := d.Bool(v["b"], "b"); ok {
		t.Error("yes is not a boolean (YAML 1.2)")
	}
	if b, ok := d.Bool(v["t"], "t"); !ok || !b {
		t.Error("true")
	}
	if _, ok := d.Int(v["i"], "i", 0, 10); ok {
		t.Error(`"3" is a string`)
	}
	if n, ok := d.Int(v["j"], "j", 0, 10); !ok || n != 7 {
		t.Error("7")
	}
	if _, ok := d.Int(v["k"], "k", 0, 10); ok {
		t.Error("70 > 10")
	}
	if x, ok := d.Duration(v["dur"], "dur", 0, time.Second); !ok || x != 250*time.Millisecond {
		t.Errorf("250ms: %v", x)
	}
	if _, ok := d.Duration(v["dnu"], "dnu", 0, time.Second); ok {
		t.Error("a duration without a unit")
	}
	if p, ok := d.Percent(v["p"], "p"); !ok || p != 0.05 {
		t.Errorf("5%%: %v", p)
	}
	if w := d.Words(v["w"], "w"); strings.Join(w, ",") != "a,b" {
		t.Errorf("words %q", w)
	}
	if _, ok := d.OneOf(v["o"], "o", "colour", []string{"red", "green"}); ok {
		t.Error("reen is no colour")
	}
	want := []string{
		`1:4: b: must be true or false, got "yes"`,
		`3:4: i: must be a whole number in 0 .. 10, got "3"`,
		`5:4: k: 70 is out of range (valid: 0 .. 10)`,
		`7:6: dnu: duration "10" has no unit: write e.g. 10s or 10ms`,
		`10:4: o: unknown colour "reen" (valid: red, green; did you mean "green"?)`,
	}
	if strings.Join(*out, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(*out, "\n"), strings.Join(want, "\n"))
	}
}
