package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/spf13/cobra"
)

func newShellCmd() *cobra.Command {
	var lab string
	cmd := &cobra.Command{
		Use:               "shell [--lab LAB] <node>",
		Short:             "Interactive shell inside a node; the prompt shows the node",
		Example:           `  sudo emuctl shell h1`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeNodes(1, anyNode),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := resolveLab(lab)
			if err != nil {
				return err
			}
			return nodeShell(st.Lab, args[0])
		},
	}
	addLabFlag(cmd, &lab, false)
	return cmd
}

// nodeShell starts bash (or sh) in a node. bash gets an rc file that
// sources the usual ones and then sets a prompt naming the node and lab, so
// a user's PS1 cannot hide where they are.
func nodeShell(lab, node string) error {
	prompt := fmt.Sprintf(`[%s@%s] \w\$ `, node, lab)
	if bash, err := exec.LookPath("bash"); err == nil {
		rc := filepath.Join(golab.StateDir(lab), "shellrc")
		content := "[ -f /etc/bash.bashrc ] && . /etc/bash.bashrc\n[ -f ~/.bashrc ] && . ~/.bashrc\n" +
			"PS1='[\\u@" + node + " (" + lab + ")] \\w\\$ '\n"
		if err := os.WriteFile(rc, []byte(content), 0o644); err != nil {
			return err
		}
		return execInNode(lab, node, []string{bash, "--rcfile", rc, "-i"}, nil)
	}
	return execInNode(lab, node, []string{"/bin/sh", "-i"}, []string{"PS1=" + prompt})
}
