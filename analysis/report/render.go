package report

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"strings"
)

// markdown renders the document; figures use the PNG copies.
func (d *document) markdown(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", d.title)
	for _, bl := range d.blocks {
		switch x := bl.(type) {
		case heading:
			fmt.Fprintf(&b, "%s %s\n\n", strings.Repeat("#", x.level+1), x.text)
		case para:
			fmt.Fprintf(&b, "%s\n\n", x.text)
		case tableBlock:
			if err := x.t.Markdown(&b); err != nil {
				return err
			}
			fmt.Fprintf(&b, "\n[CSV](tables/%s.csv) · [JSON](tables/%s.json)\n\n", x.name, x.name)
		case figure:
			fmt.Fprintf(&b, "![%s](plots/%s.png)\n\n*%s* ([SVG](plots/%s.svg))\n\n", x.caption, x.name, x.caption, x.name)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

const htmlHead = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%s</title>
<style>
body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0;font-size:90%%}
th,td{border:1px solid #ccc;padding:.25em .6em}
th{background:#f2f2f2}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td:first-child{white-space:nowrap}
.scroll{overflow-x:auto}
caption{font-weight:bold;text-align:left;padding:.3em 0}
figure{margin:1em 0}
img{max-width:100%%}
.links{font-size:85%%;color:#666}
</style></head><body>
`

// htmlDoc renders the document; figures use the SVG copies.
func (d *document) html(w io.Writer) error {
	var b bytes.Buffer
	esc := html.EscapeString
	fmt.Fprintf(&b, htmlHead, esc(d.title))
	fmt.Fprintf(&b, "<h1>%s</h1>\n", esc(d.title))
	for _, bl := range d.blocks {
		switch x := bl.(type) {
		case heading:
			fmt.Fprintf(&b, "<h%d>%s</h%d>\n", x.level+1, esc(x.text), x.level+1)
		case para:
			fmt.Fprintf(&b, "<p>%s</p>\n", esc(x.text))
		case tableBlock:
			t := x.t
			b.WriteString("<div class=\"scroll\"><table>\n")
			if t.Title != "" {
				fmt.Fprintf(&b, "<caption>%s</caption>\n", esc(t.Title))
			}
			b.WriteString("<tr>")
			for _, c := range t.Columns {
				h := c.Header
				if c.Unit != "" {
					h += " (" + c.Unit + ")"
				}
				fmt.Fprintf(&b, "<th>%s</th>", esc(h))
			}
			b.WriteString("</tr>\n")
			for _, r := range t.Rows {
				b.WriteString("<tr>")
				for i, v := range r {
					cls := ""
					switch v.(type) {
					case float64, int, int64:
						cls = ` class="num"`
					}
					fmt.Fprintf(&b, "<td%s>%s</td>", cls, esc(t.Cell(i, v)))
				}
				b.WriteString("</tr>\n")
			}
			b.WriteString("</table></div>\n")
			fmt.Fprintf(&b, "<p class=\"links\"><a href=\"tables/%s.csv\">CSV</a> · <a href=\"tables/%s.json\">JSON</a></p>\n", esc(x.name), esc(x.name))
		case figure:
			fmt.Fprintf(&b, "<figure><img src=\"plots/%s.svg\" alt=\"%s\"><figcaption>%s (<a href=\"plots/%s.png\">PNG</a>)</figcaption></figure>\n",
				esc(x.name), esc(x.caption), esc(x.caption), esc(x.name))
		}
	}
	b.WriteString("</body></html>\n")
	_, err := w.Write(b.Bytes())
	return err
}
