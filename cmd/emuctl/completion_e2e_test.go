package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
)

// completion is what `emuctl __complete ARGS...` (what the shells call)
// answered: the candidates without their descriptions, the active help
// and the directive.
type completion struct {
	names, help []string
	directive   string
}

func parseCompletion(t *testing.T, out string) completion {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var c completion
	c.directive = lines[len(lines)-1]
	if !strings.HasPrefix(c.directive, ":") {
		t.Fatalf("no directive in %q", out)
	}
	for _, l := range lines[:len(lines)-1] {
		if h, ok := strings.CutPrefix(l, "_activeHelp_ "); ok {
			c.help = append(c.help, h)
			continue
		}
		name, _, _ := strings.Cut(l, "\t")
		c.names = append(c.names, name)
	}
	return c
}

func complete(t *testing.T, args ...string) completion {
	t.Helper()
	return parseCompletion(t, must(t, run(t, "", append([]string{"__complete"}, args...)...), args...).stdout)
}

// noFiles is cobra's ShellCompDirectiveNoFileComp: the shell offers
// nothing but the candidates.
const noFiles = ":4"

func wantNames(t *testing.T, what string, c completion, want ...string) {
	t.Helper()
	got := slices.Clone(c.names)
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) || c.directive != noFiles {
		t.Errorf("%s: completes %v %s (help %q), want %v %s", what, c.names, c.directive, c.help, want, noFiles)
	}
}

// TestCompletionScripts: cobra's generator for each shell, and what
// completes without a lab: suites, suite files, generators; commands that
// take no file never offer file names. No root needed.
func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string]string{"bash": "bash completion V2 for emuctl", "zsh": "#compdef emuctl", "fish": "complete -c emuctl"} {
		if r := must(t, run(t, "", "completion", shell)); !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "__complete") {
			t.Errorf("completion %s lacks %q", shell, want)
		}
	}
	c := complete(t, "test", "")
	for _, s := range []string{"sack-reno", "asym-mptcp", "cc-mlo", "tack", "bufferbloat", "wifi-physics"} {
		if !slices.Contains(c.names, s) {
			t.Errorf("test <TAB> lacks the built-in suite %s: %v", s, c.names)
		}
	}
	wantNames(t, "test suite/testdata/good/ti<TAB>", complete(t, "test", "suite/testdata/good/ti"), "suite/testdata/good/tiny.yaml")
	if c := complete(t, "test", "suite/testdata/goo"); !slices.Equal(c.names, []string{"suite/testdata/good/"}) || c.directive != ":6" {
		t.Errorf("test suite/testdata/goo<TAB>: %v %s, want the directory and no space after it (:6)", c.names, c.directive)
	}
	if c := complete(t, "up", ""); c.directive != ":8" || !slices.Equal(c.names, []string{"yaml", "yml"}) {
		t.Errorf("up <TAB>: %v %s, want YAML files (:8)", c.names, c.directive)
	}
	c = complete(t, "up", "--topo", "")
	for _, g := range c.names {
		if _, err := topo.Generate(strings.TrimSuffix(g, ","), topo.GenOptions{}); err != nil {
			t.Errorf("up --topo <TAB> offers %q, which topo.Generate refuses: %v", g, err)
		}
	}
	for _, args := range [][]string{{"clean", ""}, {"doctor", ""}, {"version", ""}, {"link", "show", ""}, {"model", "tack", ""}} {
		if c := complete(t, args...); len(c.names) != 0 || c.directive != noFiles {
			t.Errorf("%v: %v %s, want nothing and no file names", args, c.names, c.directive)
		}
	}
	wantNames(t, "traffic --proto", complete(t, "traffic", "--proto", ""), "tcp", "mptcp", "udp")
}

// TestCompletion: with a real lab up, `__complete exec ""` lists its nodes
// (also for a user who is not root: the state is world-readable), lab
// names complete for --lab and down, link references for link set, hosts
// for traffic --from; with a second lab (Wi-Fi) the node completion says
// to choose a lab, wifi move/pair complete its Wi-Fi nodes, capture its
// medium. Completing changes nothing in the labs' state.
func TestCompletion(t *testing.T) {
	needRoot(t)
	must(t, run(t, "", "up", "--topo", "linear,2", "--name", "tcomp"), "up")
	t.Cleanup(func() { run(t, "", "down", "tcomp") })
	before := stateSnapshot(t, "tcomp")

	wantNames(t, "exec <TAB>", complete(t, "exec", ""), "h1", "h2", "s1", "s2")
	wantNames(t, "exec --lab tcomp <TAB>", complete(t, "exec", "--lab", "tcomp", ""), "h1", "h2", "s1", "s2")
	wantNames(t, "shell <TAB>", complete(t, "shell", ""), "h1", "h2", "s1", "s2")
	wantNames(t, "exec --lab <TAB>", complete(t, "exec", "--lab", ""), "tcomp")
	wantNames(t, "down <TAB>", complete(t, "down", ""), "tcomp")
	wantNames(t, "ls <TAB>", complete(t, "ls", ""), "tcomp")
	wantNames(t, "traffic --from <TAB>", complete(t, "traffic", "--from", ""), "h1", "h2")
	wantNames(t, "mptcp check h1 <TAB>", complete(t, "mptcp", "check", "h1", ""), "h2")
	wantNames(t, "link set --dir <TAB>", complete(t, "link", "set", "--dir", ""), "a->b", "b->a")

	var lab struct {
		Links []struct{ A, B string } `json:"links"`
	}
	if err := json.Unmarshal([]byte(must(t, run(t, "", "ls", "--json", "tcomp")).stdout), &lab); err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, l := range lab.Links {
		a, _, _ := strings.Cut(l.A, ":")
		b, _, _ := strings.Cut(l.B, ":")
		refs = append(refs, a+"-"+b)
	}
	for _, sub := range []string{"set", "up", "down"} {
		if c := complete(t, "link", sub, ""); !slices.Equal(c.names, refs) || c.directive != ":36" { // no files, keep order
			t.Errorf("link %s <TAB>: %v %s, want %v :36", sub, c.names, c.directive, refs)
		}
	}

	// not root: the state is readable, nothing else is needed
	os.Chmod(filepath.Dir(bin), 0o755)
	cmd := exec.Command(bin, "__complete", "exec", "")
	cmd.Dir = "../.."
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("__complete exec as nobody: %v %s", err, e.String())
	}
	wantNames(t, "exec <TAB> as nobody", parseCompletion(t, o.String()), "h1", "h2", "s1", "s2")

	if after := stateSnapshot(t, "tcomp"); !slices.Equal(before, after) {
		t.Errorf("completion changed the lab's state:\nbefore %v\nafter  %v", before, after)
	}
	for _, ref := range refs { // each reference offered names its link
		must(t, run(t, "", "link", "down", ref), "link down", ref)
		must(t, run(t, "", "link", "up", ref), "link up", ref)
	}

	if wifi.ProbeHwsim() == nil {
		t.Skip("this kernel has mac80211_hwsim: topologies/wifi.yaml runs there without the medium whose nodes wifi move completes")
	}
	must(t, run(t, "", "up", "--name", "tcompw", "topologies/wifi.yaml"), "up wifi")
	t.Cleanup(func() { run(t, "", "down", "tcompw") })
	c := complete(t, "exec", "")
	if len(c.names) != 0 || len(c.help) != 1 || !strings.Contains(c.help[0], "labs are running") || !strings.Contains(c.help[0], "--lab") {
		t.Errorf("exec <TAB> with two labs: %v, help %q: want no names and the help to choose a lab", c.names, c.help)
	}
	wantNames(t, "down <TAB>", complete(t, "down", ""), "tcomp", "tcompw")
	wantNames(t, "wifi move <TAB>", complete(t, "wifi", "move", "--lab", "tcompw", ""), "ap1", "sta1", "sta2")
	wantNames(t, "wifi pair sta1 <TAB>", complete(t, "wifi", "pair", "-l", "tcompw", "sta1", ""), "ap1", "sta2")
	if c := complete(t, "wifi", "move", "-l", "tcomp", ""); len(c.names) != 0 || len(c.help) != 1 || !strings.Contains(c.help[0], "no Wi-Fi medium") {
		t.Errorf("wifi move in a wired lab: %v %q", c.names, c.help)
	}
	if c := complete(t, "link", "set", "-l", "tcompw", ""); !slices.Contains(c.names, "sta1") || !slices.Contains(c.names, "srv-ap1") {
		t.Errorf("link set <TAB> in the Wi-Fi lab lacks the station's hop or the wired link: %v", c.names)
	}
	if c := complete(t, "capture", "-l", "tcompw", ""); !slices.Contains(c.names, "medium") || !slices.Contains(c.names, "srv:srv-eth0") {
		t.Errorf("capture <TAB> in the Wi-Fi lab: %v", c.names)
	}
}

// stateSnapshot lists a lab's state files with size and modification time
// (and the run dir's entries naming the lab).
func stateSnapshot(t *testing.T, lab string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(emu.StateDir(lab), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			out = append(out, p+" "+fi.ModTime().Format(time.RFC3339Nano)+" "+fi.Mode().String())
		}
		return nil
	})
	ents, _ := os.ReadDir(emu.RunDir())
	for _, e := range ents {
		if strings.Contains(e.Name(), lab) {
			out = append(out, "run dir: "+e.Name())
		}
	}
	return out
}
