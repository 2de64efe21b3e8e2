package analysis

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Column describes one table column.
type Column struct {
	// Key is the JSON/CSV-friendly name, e.g. "goodput_mbps".
	Key string `json:"key"`
	// Header is the human heading, e.g. "goodput".
	Header string `json:"header"`
	// Unit is printed after the header in Markdown, e.g. "Mbit/s".
	Unit string `json:"unit,omitempty"`
	// Digits is the number of significant digits numbers are printed with
	// in Markdown and CSV (default 4). JSON keeps full precision.
	Digits int `json:"-"`
}

// Table is a rectangular result table. Cells hold string, float64, int,
// int64 or nil (empty); NaN and ±Inf print as empty.
type Table struct {
	Title   string
	Columns []Column
	Rows    [][]any
}

// AddRow appends a row; it panics when the cell count is wrong, which is
// a programming error in the table's builder.
func (t *Table) AddRow(cells ...any) {
	if len(cells) != len(t.Columns) {
		panic(fmt.Sprintf("table %q: row with %d cells, want %d", t.Title, len(cells), len(t.Columns)))
	}
	t.Rows = append(t.Rows, cells)
}

// FormatNumber prints v with the given significant digits in plain
// decimal notation without trailing zeros — 47.3512 → "47.35",
// 16666.7 → "16667", 0.0240 → "0.024" — except that magnitudes below 1e-4
// use an exponent (1.57e-16).
func FormatNumber(v float64, digits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	if digits <= 0 {
		digits = 4
	}
	if v == 0 {
		return "0"
	}
	if math.Abs(v) < 1e-4 {
		return strconv.FormatFloat(v, 'g', digits, 64)
	}
	dec := digits - 1 - int(math.Floor(math.Log10(math.Abs(v))))
	if dec < 0 {
		dec = 0
	}
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// Cell formats the value v of column i as Markdown and CSV print it.
func (t *Table) Cell(i int, v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return FormatNumber(x, t.Columns[i].Digits)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// Markdown writes the table as a GitHub-flavoured Markdown table, with the
// title as a bold caption line when set.
func (t *Table) Markdown(w io.Writer) error {
	var b strings.Builder
	if t.Title != "" {
		fmt.Fprintf(&b, "**%s**\n\n", t.Title)
	}
	b.WriteString("|")
	for _, c := range t.Columns {
		h := c.Header
		if c.Unit != "" {
			h += " (" + c.Unit + ")"
		}
		b.WriteString(" " + mdEscape(h) + " |")
	}
	b.WriteString("\n|")
	for i := range t.Columns {
		if t.numeric(i) {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		b.WriteString("|")
		for i, v := range r {
			b.WriteString(" " + mdEscape(t.Cell(i, v)) + " |")
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// numeric reports whether a column holds only numbers (right-aligned).
func (t *Table) numeric(i int) bool {
	seen := false
	for _, r := range t.Rows {
		switch r[i].(type) {
		case float64, int, int64:
			seen = true
		case nil:
		default:
			return false
		}
	}
	return seen
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// CSV writes the table with a header row of column keys.
func (t *Table) CSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	hdr := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		hdr[i] = c.Key
	}
	if err := cw.Write(hdr); err != nil {
		return err
	}
	for _, r := range t.Rows {
		rec := make([]string, len(r))
		for i, v := range r {
			rec[i] = t.Cell(i, v)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// tableJSON is the JSON form: rows are objects keyed by column key.
type tableJSON struct {
	Title   string           `json:"title,omitempty"`
	Columns []Column         `json:"columns"`
	Rows    []map[string]any `json:"rows"`
}

// JSON writes the table as {"title", "columns", "rows": [{key: value}]},
// with numbers at full precision (NaN and ±Inf become null).
func (t *Table) JSON(w io.Writer) error {
	out := tableJSON{Title: t.Title, Columns: t.Columns, Rows: []map[string]any{}}
	for _, r := range t.Rows {
		m := map[string]any{}
		for i, v := range r {
			if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
				v = nil
			}
			m[t.Columns[i].Key] = v
		}
		out.Rows = append(out.Rows, m)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// Write renders the table in format "md", "csv" or "json".
func (t *Table) Write(w io.Writer, format string) error {
	switch format {
	case "md", "markdown", "":
		return t.Markdown(w)
	case "csv":
		return t.CSV(w)
	case "json":
		return t.JSON(w)
	}
	return fmt.Errorf("unknown table format %q (valid: md, csv, json)", format)
}
