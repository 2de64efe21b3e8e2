// Command quickstart is a lab in 30 lines of Go: two hosts behind a
// switch, one link shaped to 10 Mbit/s and 5 ms, a ping, a TCP flow, down.
// As root: go run ./examples/quickstart
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/units"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run() (err error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	l, err := lab.Up(ctx, lab.NewTopology("quickstart").
		Host("h1").Host("h2").Switch("s1").
		Link("h1", "s1", lab.Rate(10*units.Mbit), lab.Delay(5*time.Millisecond)).
		Link("h2", "s1"), lab.Options{})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, l.Down()) }()
	best := time.Hour
	for range 5 { // the first also waits for ARP
		rtt, err := l.Ping(ctx, "h1", "h2")
		if err != nil {
			return err
		}
		best = min(best, rtt)
	}
	fmt.Printf("ping h1 -> h2: %v, the best of 5 (the link adds 2 x 5 ms)\n", best.Round(time.Microsecond))
	res, err := l.Traffic(ctx, lab.Flow{Client: "h1", Server: "h2", Duration: 5 * time.Second})
	if err != nil {
		return err
	}
	s := res.Summary[0]
	fmt.Printf("tcp h1 -> h2: %.3f Mbit/s of %.3f (10 Mbit/s x 1448/1514): %.1f %%\n",
		s.SteadyGoodputBps/1e6, s.CapacityBps/1e6, 100*s.Utilisation)
	return nil
}
