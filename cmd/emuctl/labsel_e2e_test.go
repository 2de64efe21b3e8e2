package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// labCommands is every command that acts on a running lab, with valid
// arguments apart from the lab, LAB standing where the lab goes. Forms
// with --lab come first; the positional alias follows for the commands
// that have always had it.
var labCommands = [][]string{
	{"ls", "--lab", "LAB"},
	{"inspect", "--lab", "LAB"},
	{"exec", "--lab", "LAB", "h1", "--", "true"},
	{"shell", "--lab", "LAB", "h1"},
	{"cli", "--lab", "LAB"},
	{"verify", "--lab", "LAB"},
	{"link", "show", "--lab", "LAB"},
	{"link", "set", "--lab", "LAB", "0", "--rate", "5mbit"},
	{"link", "down", "--lab", "LAB", "0"},
	{"link", "up", "--lab", "LAB", "0"},
	{"wifi", "show", "--lab", "LAB"},
	{"wifi", "move", "--lab", "LAB", "sta1", "10,0"},
	{"wifi", "pair", "--lab", "LAB", "sta1", "ap1", "--clear"},
	{"mptcp", "check", "--lab", "LAB", "h1", "h2"},
	{"traffic", "--lab", "LAB", "--from", "h1", "--to", "h2", "-t", "1s"},
	{"capture", "--lab", "LAB", "h1:h1-eth0", "-c", "1", "-w", "OUT"},
	{"capture", "medium", "--lab", "LAB", "-d", "1s", "-w", "OUT"},
	{"down", "--lab", "LAB"},
	// the positional alias
	{"ls", "LAB"},
	{"inspect", "LAB"},
	{"cli", "LAB"},
	{"verify", "LAB"},
	{"down", "LAB"},
}

// labCommand fills in the lab (dropping the --lab pair when lab is "")
// and the output file.
func labCommand(c []string, lab, out string) []string {
	var args []string
	for i := 0; i < len(c); i++ {
		switch {
		case c[i] == "--lab" && lab == "":
			i++
		case c[i] == "LAB" && lab == "":
		case c[i] == "LAB":
			args = append(args, lab)
		case c[i] == "OUT":
			args = append(args, out)
		default:
			args = append(args, c[i])
		}
	}
	return args
}

var (
	unknownLabErr   = regexp.MustCompile(`^emuctl: no lab "tselnone" is running \(running: ([^()]+)\)\n$`)
	ambiguousLabErr = regexp.MustCompile(`^emuctl: [0-9]+ labs are running \(([^()]+)\): choose one with --lab/-l LAB\n$`)
)

// TestLabSelection: one rule for every lab-taking command. An unknown lab
// is the same one-line error everywhere, naming the running labs (down,
// idempotent, says it and succeeds); with two labs running and none
// chosen, every command refuses with the same message, which names both
// and the flag that chooses; --lab and the positional alias select alike.
func TestLabSelection(t *testing.T) {
	needRoot(t)
	for _, lab := range []string{"tsel1", "tsel2"} {
		must(t, run(t, "", "up", "--topo", "single,2", "--name", lab), "up", lab)
		t.Cleanup(func() { run(t, "", "down", lab) })
	}
	out := filepath.Join(t.TempDir(), "x.pcapng")
	named := func(what, list string) {
		t.Helper()
		for _, lab := range []string{"tsel1", "tsel2"} {
			if !strings.Contains(", "+list+", ", ", "+lab+", ") {
				t.Errorf("%s: the list %q lacks %s", what, list, lab)
			}
		}
	}

	for _, c := range labCommands {
		args := labCommand(c, "tselnone", out)
		r := run(t, "", args...)
		if args[0] == "down" {
			if r.code != 0 || !strings.Contains(r.stderr, `no lab "tselnone" is running (running: `) {
				t.Errorf("%v: exit %d, stderr %q: want success and a note naming the running labs", args, r.code, r.stderr)
			}
			continue
		}
		m := unknownLabErr.FindStringSubmatch(r.stderr)
		if r.code != 1 || r.stdout != "" || m == nil {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q\nwant exit 1 and only %v", args, r.code, r.stdout, r.stderr, unknownLabErr)
			continue
		}
		named(strings.Join(args, " "), m[1])
	}

	seen := map[string]bool{}
	for _, c := range labCommands {
		args := labCommand(c, "", out)
		if args[0] == "ls" { // ls without a lab lists the labs
			continue
		}
		if seen[strings.Join(args, " ")] {
			continue
		}
		seen[strings.Join(args, " ")] = true
		r := run(t, "", args...)
		m := ambiguousLabErr.FindStringSubmatch(r.stderr)
		if r.code != 1 || r.stdout != "" || m == nil {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q\nwant exit 1 and only %v", args, r.code, r.stdout, r.stderr, ambiguousLabErr)
			continue
		}
		named(strings.Join(args, " "), m[1])
	}

	if r := run(t, "", "exec", "-l", "tsel3", "h1", "--", "true"); r.code != 1 || !strings.HasSuffix(r.stderr, `; did you mean "tsel1"?)`+"\n") {
		t.Errorf("a near miss names the lab meant: exit %d %q", r.code, r.stderr)
	}
	if r := run(t, "", "ls", "tsel1", "--lab", "tsel2"); r.code == 0 || !strings.Contains(r.stderr, `two labs given: "tsel1" and --lab "tsel2"`) {
		t.Errorf("ls tsel1 --lab tsel2: exit %d %q", r.code, r.stderr)
	}
	if r := run(t, "", "down", "--all", "--lab", "tsel2"); r.code == 0 || !strings.Contains(r.stderr, "not both") {
		t.Errorf("down --all --lab: exit %d %q", r.code, r.stderr)
	}
	// both forms select: the flag and the alias give the same answer
	if a, b := must(t, run(t, "", "ls", "-l", "tsel1", "--json")).stdout, must(t, run(t, "", "ls", "tsel1", "--json")).stdout; a != b || !strings.Contains(a, `"tsel1"`) {
		t.Errorf("ls -l tsel1 and ls tsel1 differ:\n%s\n%s", a, b)
	}
	must(t, run(t, "", "exec", "-l", "tsel2", "h1", "--", "ping", "-c1", "-W2", "h2"))
	if r := must(t, run(t, "", "down", "--lab", "tsel1")); r.stdout != "lab tsel1 down\n" {
		t.Errorf("down --lab tsel1: %q", r.stdout)
	}
	if r := must(t, run(t, "", "down", "tsel2")); r.stdout != "lab tsel2 down\n" {
		t.Errorf("down tsel2: %q", r.stdout)
	}
}
