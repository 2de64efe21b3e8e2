package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	golab "github.com/emuctl/emuctl/lab"
)

// verifyBuilt is verify --built: every node read back and compared with
// the lab's topology, one row per node.
func verifyBuilt(name string, asJSON bool) error {
	l, err := golab.Open(name)
	if err != nil {
		return err
	}
	res, err := l.VerifyBuilt()
	if err != nil {
		return err
	}
	bad := 0
	for _, b := range res {
		if !b.OK() {
			bad++
		}
	}
	if asJSON {
		if err := writeJSON(os.Stdout, res); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NODE\tKIND\tINTERFACES\tRESULT")
		for _, b := range res {
			var ifs []string
			for _, i := range b.Ifaces {
				s := i.Name
				if len(i.Addrs) > 0 {
					s += " " + strings.Join(i.Addrs, ",")
				}
				if !i.Up {
					s += " (down)"
				}
				ifs = append(ifs, s)
			}
			verdict := "ok"
			if !b.OK() {
				verdict = "DIFFERS: " + strings.Join(b.Problems, "; ")
			}
			if len(ifs) == 0 {
				ifs = []string{"(none)"}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", b.Node, b.Kind, strings.Join(ifs, "; "), verdict)
		}
		tw.Flush()
	}
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "%d of %d nodes differ from the lab's topology\n", bad, len(res))
		return exitError{1}
	}
	return nil
}
