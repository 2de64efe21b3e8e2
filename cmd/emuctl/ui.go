package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/emuctl/emuctl/ui"
	"github.com/spf13/cobra"
)

func newUICmd() *cobra.Command {
	var lab, listen string
	var port int
	var allow bool
	cmd := &cobra.Command{
		Use:   "ui [-l LAB] [--port N] [--listen ADDR] [--allow-changes]",
		Short: "Serve a live web page of a running lab (topology, link rates, drops, events)",
		Long: `Serves one page of a running lab on 127.0.0.1 (a free port unless --port)
and prints its URL with a random token; every request without the token is
refused (403). The page draws every node by kind and every link with its
configured parameters, and updates 4 times a second each direction's
throughput (a colour and a number), drops and link state, from the same
event stream as emuctl api's events.subscribe; it lists the lab's events
(link-changed, link-state, node-added, lab-down, ...). Click a node for its
interfaces, addresses and routes, a link for its throughput since the page
opened. A Wi-Fi lab gets a map of its medium to scale: APs, stations,
associations, each station's rate and SNR.

The page is read-only unless --allow-changes: then a link can be set
(rate=20mbit delay=5ms ...), pulled down and plugged up from it, and a
Wi-Fi station dragged on the map, through the same code as emuctl link
set/down/up and wifi move; and a node's shell opened in the page (one
command line at a time, over a WebSocket). --listen ADDR serves beyond
loopback (anyone who can reach it and holds the URL controls what the page
can do).`,
		Example: `  sudo emuctl ui
  sudo emuctl ui -l demo --port 8080 --allow-changes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			longLivedGC()
			st, err := resolveLab(lab)
			if err != nil {
				return err
			}
			addr, err := uiAddr(cmd, port, listen)
			if err != nil {
				return err
			}
			mode := "read-only"
			if allow {
				mode = "changes allowed"
			}
			what := "sees the lab"
			if allow {
				what += " and can change its links"
			}
			return serveUI(cmd, ui.Options{Lab: st.Lab, Listen: addr, AllowChanges: allow, Log: logger()},
				fmt.Sprintf("emuctl ui: lab %s (%s)", st.Lab, mode), what)
		},
	}
	addLabFlag(cmd, &lab, false)
	cmd.Flags().IntVar(&port, "port", 0, "port on 127.0.0.1 (default: a free one)")
	cmd.Flags().StringVar(&listen, "listen", "", "ADDR:PORT to serve on instead of 127.0.0.1 (beyond loopback: with care)")
	cmd.Flags().BoolVar(&allow, "allow-changes", false, "let the page change links, move Wi-Fi stations and open shells in nodes")
	return cmd
}

// uiAddr is where a page is served: 127.0.0.1 and --port (0: a free
// port), or --listen ADDR:PORT.
func uiAddr(cmd *cobra.Command, port int, listen string) (string, error) {
	if listen == "" {
		return "127.0.0.1:" + strconv.Itoa(port), nil
	}
	if cmd.Flags().Changed("port") {
		return "", fmt.Errorf("give --listen ADDR:PORT or --port N, not both")
	}
	return listen, nil
}

// serveUI serves a page until Ctrl-C or SIGTERM, having printed head and
// its URL (and a red warning when it is served beyond loopback: anyone
// who reaches it with the URL what).
func serveUI(cmd *cobra.Command, opt ui.Options, head, what string) error {
	// signals are taken before the URL is out: a stop right after it ends the server cleanly
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := ui.New(opt)
	if err != nil {
		return err
	}
	if !s.Loopback() {
		fmt.Fprintf(os.Stderr, "\033[1;31mwarning: serving on %s, beyond loopback: anyone who reaches it with the URL %s\033[0m\n", s.Addr(), what)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s, Ctrl-C to stop\n    %s\n", head, s.URL())
	return s.Serve(ctx)
}
