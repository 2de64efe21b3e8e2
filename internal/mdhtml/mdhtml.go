// Package mdhtml renders the Markdown emuctl writes its reports in
// (report.md) as HTML: the page emuctl ui and emuctl report --ui serve, and
// the report.html a suite writes beside its report.md.
package mdhtml

import (
	"bytes"
	"fmt"
	"html"
	"path"
	"regexp"
	"strings"
)

// Page is md as a page of its own: its first heading as the title, nav
// (HTML, trusted: the caller's links) above it, relative links and images
// under base ("" leaves them relative to the page). Wide tables scroll
// rather than wrap their first column.
func Page(md []byte, base, nav string) []byte {
	var b bytes.Buffer
	title := "emuctl report"
	if m := mdTitle.FindSubmatch(md); m != nil {
		title = string(m[1])
	}
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%s</title>
<style>
body{font-family:system-ui,sans-serif;max-width:1300px;margin:1.5em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0;font-size:88%%;display:block;overflow-x:auto;max-width:100%%}
th,td{border:1px solid #ccc;padding:.2em .5em;vertical-align:top}
td:first-child{white-space:nowrap}
th{background:#f2f2f2}
code{font-size:90%%;background:#f6f6f6}
img{max-width:100%%}
nav{font-size:90%%;margin-bottom:1em;color:#555}
</style></head><body>
`, html.EscapeString(title))
	if nav != "" {
		b.WriteString("<nav>" + nav + "</nav>\n")
	}
	b.WriteString(Render(string(md), base))
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

// Render renders the Markdown emuctl's reports are written in —
// headings, paragraphs, pipe tables, bullet lists, fenced code, images,
// links, code spans, bold and italics — as HTML; a relative link or image
// path is taken under base. Everything else is text, escaped.
func Render(src, base string) string {
	var b strings.Builder
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	var para []string
	flush := func() {
		if len(para) > 0 {
			fmt.Fprintf(&b, "<p>%s</p>\n", inline(strings.Join(para, " "), base))
			para = nil
		}
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		t := strings.TrimSpace(l)
		switch {
		case t == "":
			flush()
		case strings.HasPrefix(t, "```"):
			flush()
			b.WriteString("<pre><code>")
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				b.WriteString(html.EscapeString(lines[i]) + "\n")
			}
			b.WriteString("</code></pre>\n")
		case strings.HasPrefix(t, "#"):
			flush()
			n := len(t) - len(strings.TrimLeft(t, "#"))
			if n > 6 || len(t) == n || t[n] != ' ' {
				para = append(para, t)
				continue
			}
			fmt.Fprintf(&b, "<h%d>%s</h%d>\n", n, inline(strings.TrimSpace(t[n:]), base), n)
		case strings.HasPrefix(t, "|"):
			flush()
			var rows [][]string
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				rows = append(rows, cells(strings.TrimSpace(lines[i])))
			}
			i--
			b.WriteString("<table>\n")
			for r, row := range rows {
				if r == 1 && separatorRow(row) {
					continue
				}
				tag := "td"
				if r == 0 && len(rows) > 1 && separatorRow(rows[1]) {
					tag = "th"
				}
				b.WriteString("<tr>")
				for _, c := range row {
					fmt.Fprintf(&b, "<%s>%s</%s>", tag, inline(c, base), tag)
				}
				b.WriteString("</tr>\n")
			}
			b.WriteString("</table>\n")
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* "):
			flush()
			b.WriteString("<ul>\n")
			for ; i < len(lines); i++ {
				u := strings.TrimSpace(lines[i])
				if !strings.HasPrefix(u, "- ") && !strings.HasPrefix(u, "* ") {
					break
				}
				fmt.Fprintf(&b, "<li>%s</li>\n", inline(u[2:], base))
			}
			i--
			b.WriteString("</ul>\n")
		default:
			para = append(para, t)
		}
	}
	flush()
	return b.String()
}

// cells splits a pipe-table row; \| is a pipe inside a cell.
func cells(row string) []string {
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	var out []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case row[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

func separatorRow(row []string) bool {
	for _, c := range row {
		if strings.Trim(c, ":-") != "" || c == "" {
			return false
		}
	}
	return len(row) > 0
}

var (
	mdTitle  = regexp.MustCompile(`(?m)^# (.+)$`)
	mdCode   = regexp.MustCompile("`([^`]+)`")
	mdImage  = regexp.MustCompile(`!\[([^\]]*)\]\(([^)\s]+)\)`)
	mdLink   = regexp.MustCompile(`\[([^\]]+)\]\(([^)\s]+)\)`)
	mdBold   = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	mdItalic = regexp.MustCompile(`(^|[\s(])\*([^*\s][^*]*)\*`)
)

// inline renders a line's inline markup. Code spans are cut out first,
// so nothing inside them is markup; the rest is escaped, then marked up.
func inline(s, base string) string {
	var codes []string
	s = mdCode.ReplaceAllStringFunc(s, func(m string) string {
		codes = append(codes, "<code>"+html.EscapeString(m[1:len(m)-1])+"</code>")
		return fmt.Sprintf("\x00%d\x00", len(codes)-1)
	})
	s = html.EscapeString(s)
	s = mdImage.ReplaceAllStringFunc(s, func(m string) string {
		p := mdImage.FindStringSubmatch(m)
		return fmt.Sprintf(`<img src="%s" alt="%s">`, href(p[2], base), p[1])
	})
	s = mdLink.ReplaceAllStringFunc(s, func(m string) string {
		p := mdLink.FindStringSubmatch(m)
		return fmt.Sprintf(`<a href="%s">%s</a>`, href(p[2], base), p[1])
	})
	s = mdBold.ReplaceAllString(s, "<strong>$1</strong>")
	s = mdItalic.ReplaceAllString(s, "$1<em>$2</em>")
	for i, c := range codes {
		s = strings.Replace(s, fmt.Sprintf("\x00%d\x00", i), c, 1)
	}
	return s
}

// href puts a relative path under base; absolute URLs and anchors stay.
func href(p, base string) string {
	if strings.Contains(p, "://") || strings.HasPrefix(p, "#") || strings.HasPrefix(p, "/") || base == "" {
		return p
	}
	return path.Join(base, p)
}
