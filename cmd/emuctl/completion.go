package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/suite"
	"github.com/emuctl/emuctl/topo"
	"github.com/spf13/cobra"
)

// Shell completion (`emuctl completion bash|zsh|fish|powershell`, cobra's
// generator; the shells call the hidden `emuctl __complete ARGS...`).
// Names come from the labs' recorded state under /run/emuctl, read only:
// completing changes nothing and needs no root when the state is
// readable (it is, 0644). What cannot be completed (no lab running,
// several and none chosen) is said as active help, never as file names.

// noFileArgs makes every command's positional arguments complete nothing
// unless the command says what they are (a node, a lab, a file): without
// it the shells offer file names, as `exec <TAB>` once did.
func noFileArgs(c *cobra.Command) {
	for _, s := range c.Commands() {
		if s.ValidArgsFunction == nil && len(s.ValidArgs) == 0 {
			s.ValidArgsFunction = cobra.NoFileCompletions
		}
		noFileArgs(s)
	}
}

// completionLab is the lab a completion is for: --lab if given (cobra has
// parsed the flags typed so far), else the only running lab. When there is
// none it returns the reason as active help.
func completionLab(cmd *cobra.Command) (*golab.State, []cobra.Completion) {
	name, _ := cmd.Flags().GetString("lab")
	st, err := resolveLab(name)
	if err != nil {
		return nil, cobra.AppendActiveHelp(nil, err.Error())
	}
	if st.Spec == nil {
		return nil, cobra.AppendActiveHelp(nil, fmt.Sprintf("lab %s has no recorded topology (status %s)", st.Lab, st.Status))
	}
	return st, nil
}

// completeLabs completes running labs' names (--lab, and the positional
// alias).
func completeLabs(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	labs, err := golab.Labs()
	if err != nil {
		return cobra.AppendActiveHelp(nil, err.Error()), cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, st := range labs {
		desc := st.Status
		if st.Spec != nil {
			desc = fmt.Sprintf("%s, %s, %s", st.Status, count(len(st.Spec.Nodes), "node"), count(len(st.Spec.Links), "link"))
		}
		out = append(out, cobra.CompletionWithDesc(st.Lab, desc))
	}
	if len(out) == 0 {
		out = cobra.AppendActiveHelp(out, errNoLabRunning.Error())
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeLabArg completes the positional lab of ls, inspect, down, verify
// and cli: one, unless --lab already names it.
func completeLabArg(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 || cmd.Flags().Changed("lab") {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return completeLabs(cmd, args, toComplete)
}

// nodeFilter picks the nodes a completion offers.
type nodeFilter func(*topo.Node) bool

func anyNode(*topo.Node) bool        { return true }
func hostOrRouter(n *topo.Node) bool { return n.Kind != topo.KindSwitch }

// completeNodes completes node names of the selected lab for the first n
// positional arguments (a name already given is not offered again).
func completeNodes(n int, keep nodeFilter) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) >= n {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return nodeNames(cmd, keep, args), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeNodeFlag completes a flag whose value is a node (traffic --from).
func completeNodeFlag(keep nodeFilter) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return nodeNames(cmd, keep, nil), cobra.ShellCompDirectiveNoFileComp
	}
}

func nodeNames(cmd *cobra.Command, keep nodeFilter, given []string) []cobra.Completion {
	st, help := completionLab(cmd)
	if st == nil {
		return help
	}
	var out []cobra.Completion
	for i := range st.Spec.Nodes {
		n := &st.Spec.Nodes[i]
		if keep(n) && !slices.Contains(given, n.Name) {
			out = append(out, cobra.CompletionWithDesc(n.Name, n.DisplayKind()))
		}
	}
	return out
}

// completeExec: the node, then the command (file names, as a shell would).
func completeExec(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nodeNames(cmd, anyNode, nil), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveDefault
}

// completeCaptureTarget completes <node>:<iface> (and medium when the lab
// has a Wi-Fi medium).
func completeCaptureTarget(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	st, help := completionLab(cmd)
	if st == nil {
		return help, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, n := range st.Spec.Nodes {
		for _, ifc := range n.Interfaces {
			out = append(out, cobra.CompletionWithDesc(n.Name+":"+ifc.Name, addrList(ifc)))
		}
	}
	if st.Medium != nil {
		out = append(out, cobra.CompletionWithDesc("medium", "the lab's Wi-Fi medium ("+st.Medium.Backend+" backend)"))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeLinks completes link references for `link set/up/down`: two
// nodes (h1-s1) where that names one link, else the index; with wireless,
// also each station's wireless hop (link set changes it).
func completeLinks(wireless bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		st, help := completionLab(cmd)
		if st == nil {
			return help, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for i, l := range st.Spec.Links {
			ref := l.A.Node + "-" + l.B.Node
			if j, err := golab.FindLink(st.Spec, ref); err != nil || j != i {
				ref = strconv.Itoa(i) // two links join the same nodes
			}
			out = append(out, cobra.CompletionWithDesc(ref, fmt.Sprintf("link %d: %s <-> %s", i, l.A, l.B)))
		}
		if wireless {
			for _, n := range st.Spec.Nodes {
				if n.Station != nil && n.Station.Adhoc == "" {
					out = append(out, cobra.CompletionWithDesc(n.Name, "wireless hop "+n.Name+" <-> "+n.Station.AP))
				}
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// completeWiFiNodes completes the Wi-Fi nodes on the lab's medium for the
// first n arguments (wifi move: 1, wifi pair: 2).
func completeWiFiNodes(n int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) >= n {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		st, help := completionLab(cmd)
		if st == nil {
			return help, cobra.ShellCompDirectiveNoFileComp
		}
		if st.Medium == nil {
			return cobra.AppendActiveHelp(nil, "lab "+st.Lab+" has no Wi-Fi medium"), cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, r := range st.Medium.Radios {
			if r.Gone || slices.Contains(args, r.Node) {
				continue
			}
			desc := "Wi-Fi node"
			if n := st.Spec.Node(r.Node); n != nil {
				desc = n.DisplayKind()
			}
			out = append(out, cobra.CompletionWithDesc(r.Node, desc))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeSuites completes `emuctl test`'s argument: the built-in suites
// and suite files (*.yaml), directories included so a path can be walked.
func completeSuites(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, name := range suite.Builtins() {
		if !strings.HasPrefix(name, toComplete) {
			continue
		}
		desc := "built-in suite"
		if s, err := suite.LoadBuiltin(name); err == nil && s.Title != "" {
			desc = s.Title
		}
		out = append(out, cobra.CompletionWithDesc(name, desc))
	}
	files, dirs := yamlFiles(toComplete)
	if len(out)+len(files) == 0 && len(dirs) > 0 {
		// only directories match: no space after one, so the path goes on
		return dirs, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	return append(append(out, files...), dirs...), cobra.ShellCompDirectiveNoFileComp
}

// yamlFiles lists the *.yaml/*.yml files and the directories whose path
// starts with prefix (hidden ones only when asked for).
func yamlFiles(prefix string) (files, dirs []cobra.Completion) {
	dir, base := filepath.Split(prefix)
	ents, err := os.ReadDir(filepath.Clean("./" + dir))
	if err != nil {
		return nil, nil
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		switch ext := filepath.Ext(name); {
		case e.IsDir():
			dirs = append(dirs, dir+name+"/")
		case ext == ".yaml" || ext == ".yml":
			files = append(files, dir+name)
		}
	}
	return files, dirs
}

// yamlArgs completes topology files (up, validate): the shell's own file
// completion, filtered to YAML.
func yamlArgs(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return []cobra.Completion{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// generatorCompletions are the built-in topologies for --topo (topo.Generate).
var generatorCompletions = []cobra.Completion{
	cobra.CompletionWithDesc("single,", "single,N: switch s1, hosts h1..hN"),
	cobra.CompletionWithDesc("linear,", "linear,N: switches s1..sN in a chain, host hI on sI"),
	cobra.CompletionWithDesc("tree,", "tree,DEPTH,FANOUT: a tree of switches, hosts at the leaves"),
	cobra.CompletionWithDesc("dumbbell,", "dumbbell,N: N hosts on each side of one bottleneck"),
	cobra.CompletionWithDesc("wifi,", "wifi,N: access point ap1, stations sta1..staN"),
	cobra.CompletionWithDesc("minimal", "two hosts on one switch"),
}

// addSpecCompletion completes --topo and --switch (up, validate, bench).
func addSpecCompletion(cmd *cobra.Command) {
	completeFlag(cmd, "topo", cobra.FixedCompletions(generatorCompletions, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace))
	completeFlag(cmd, "switch", fixed(topo.SwitchLinuxBridge, topo.SwitchOVS))
}

// completeFlag registers f for cmd's flag; a flag that does not exist
// (yet: flags are defined before their completion) is a programming error
// that every newRoot — and so every test — trips over.
func completeFlag(cmd *cobra.Command, flag string, f cobra.CompletionFunc) {
	if err := cmd.RegisterFlagCompletionFunc(flag, f); err != nil {
		panic(cmd.CommandPath() + ": " + err.Error())
	}
}

// fixed completes a flag with a closed set of values.
func fixed(values ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
}

// completeCC completes congestion controls this kernel has.
func completeCC(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return strings.Fields(string(b)), cobra.ShellCompDirectiveNoFileComp
}

// count is "1 node", "3 nodes".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
