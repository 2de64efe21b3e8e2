package ui

import (
	"fmt"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/emuctl/emuctl/internal/mdhtml"
)

// A results directory is served read-only under /report/ (Options.Report):
// its files as they are — the analysis report (report.html, written by
// emuctl report), its plots and tables, each run's JSON — and, for a
// suite's directory, the suite's report (report.md: verdict, checks,
// plots) rendered as the page's front page. Nothing is written there.

// reportCSP lets the analysis report keep its inline style sheet; no
// script runs in a report page.
const reportCSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; script-src 'none'; frame-ancestors 'none'"

// reportFiles serves the results directory's files under /report/.
func (s *Server) reportFiles() http.Handler {
	files := http.StripPrefix("/report/", http.FileServerFS(os.DirFS(s.opt.Report)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", reportCSP)
		files.ServeHTTP(w, r)
	})
}

// reportIndex is the front page of a report-only server: the suite's
// report when the directory has one, else the analysis report.
func (s *Server) reportIndex(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	md, err := os.ReadFile(filepath.Join(s.opt.Report, "report.md"))
	if err != nil {
		if s.opt.ReportHTML == "" {
			http.Error(w, "this results directory has no report (report.md) and none was written", http.StatusNotFound)
			return
		}
		to := "/report/" + filepath.ToSlash(s.opt.ReportHTML)
		if r.URL.RawQuery != "" {
			to += "?" + r.URL.RawQuery // the token, for a client that keeps no cookie
		}
		http.Redirect(w, r, to, http.StatusFound)
		return
	}
	s.writeReport(w, md, reportCSP)
}

// suiteReport is a running suite's report.md, once written, as a page the
// suite's page frames (emuctl test --ui): 404 until then.
func (s *Server) suiteReport(w http.ResponseWriter, r *http.Request) {
	md, err := os.ReadFile(filepath.Join(s.opt.Report, "report.md"))
	if err != nil {
		http.Error(w, "the suite has not written its report yet", http.StatusNotFound)
		return
	}
	s.writeReport(w, md, strings.Replace(reportCSP, "frame-ancestors 'none'", "frame-ancestors 'self'", 1))
}

// writeReport renders a suite's report.md as a page of its own.
func (s *Server) writeReport(w http.ResponseWriter, md []byte, csp string) {
	nav := `emuctl report · `
	if s.opt.ReportHTML != "" {
		nav += fmt.Sprintf(`<a href="/report/%s">the analysis report (every run's tables and plots)</a> · `, html.EscapeString(filepath.ToSlash(s.opt.ReportHTML)))
	}
	nav += `<a href="/report/">the results directory</a>`
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.Write(mdhtml.Page(md, "/report/", nav))
}
