package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/emuctl/emuctl/internal/buildinfo"
	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print emuctl's version, the commit it was built from, the Go version and the platform",
		Example: `  emuctl version
  emuctl version --json
  emuctl --version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return writeVersion(cmd.OutOrStdout(), buildinfo.Read(), asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// setVersion gives the root command `--version`, printing what `version`
// prints.
func setVersion(root *cobra.Command) {
	i := buildinfo.Read()
	root.Version = i.Version
	var b strings.Builder
	writeVersion(&b, i, false)
	// The template is text/template: keep braces in values literal.
	root.SetVersionTemplate(strings.ReplaceAll(b.String(), "{{", "{{`{{`}}"))
}

func writeVersion(w io.Writer, i buildinfo.Info, asJSON bool) error {
	if asJSON {
		return writeJSON(w, i)
	}
	rev := "unknown (built without VCS information)"
	if i.Revision != "" {
		rev = i.Revision
		var notes []string
		if i.RevisionTime != "" {
			notes = append(notes, i.RevisionTime)
		}
		if i.Modified {
			notes = append(notes, "modified")
		}
		if len(notes) > 0 {
			rev += " (" + strings.Join(notes, ", ") + ")"
		}
	}
	_, err := fmt.Fprintf(w, "emuctl %s\nrevision: %s\ngo:       %s\nplatform: %s/%s\n", i.Version, rev, i.GoVersion, i.OS, i.Arch)
	return err
}
