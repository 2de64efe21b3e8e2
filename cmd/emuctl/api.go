package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/emuctl/emuctl/api"
	"github.com/spf13/cobra"
)

func newAPICmd() *cobra.Command {
	var lab string
	var schema bool
	cmd := &cobra.Command{
		Use:   "api [-l LAB] [--schema]",
		Short: "Serve emuctl's operations as JSON-RPC 2.0 on stdin/stdout (for Python and other programs)",
		Long: `Reads JSON-RPC 2.0 requests from stdin, one per line, and answers on stdout,
one per line: every operation of the lab library — up, down, nodes, links,
node.add/del, link.add/del/set/up/down, exec, shells, ping, pingall,
traffic, verify, wifi, capture, test — and an event stream of the lab's
changes and link counters (events.subscribe). Requests run concurrently and
are answered by id. --schema prints the schema (api/schema.json) of every
method, its params and result, the error codes and the notifications.

There is no network listener: a program that can start emuctl api as root
already is root. Labs brought up stay up when the session ends (down takes
them down); the session's shells and subscriptions end with it.`,
		Example: `  echo '{"jsonrpc":"2.0","id":1,"method":"labs"}' | sudo emuctl api
  sudo emuctl api --schema | python3 -m json.tool`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if schema {
				_, err := os.Stdout.Write(api.Schema)
				return err
			}
			longLivedGC()
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return api.Serve(ctx, os.Stdin, os.Stdout, api.Options{Lab: lab})
		},
	}
	cmd.Flags().StringVarP(&lab, "lab", "l", "", "the lab requests act on when they name none")
	completeFlag(cmd, "lab", completeLabs)
	cmd.Flags().BoolVar(&schema, "schema", false, "print the API's schema (JSON) and exit")
	return cmd
}
