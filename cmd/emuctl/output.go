package main

import (
	"encoding/json"
	"io"
)

// What --json means, for every command that has it (README, "Commands"):
// a boolean; the command's result as one JSON document on stdout, in place
// of its text, with the same exit status; anything else the command has to
// say goes to stderr. Where a command also takes --format (model tack,
// capture acks), --json is --format json. traffic's --json may still name
// a file (--json FILE, as -o FILE), the form it had before.

// writeJSON writes v as the one JSON document of a command's output.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
