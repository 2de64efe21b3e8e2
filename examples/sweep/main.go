// Command sweep is a custom experiment loop: one lab, one bottleneck
// whose rate is swept with SetLink (its queue kept at one bandwidth-delay
// product), a TCP flow at each step, and the measured goodput printed
// against the link's capacity R × 1448/1514. As root:
//
//	go run ./examples/sweep
//	go run ./examples/sweep -rates 1mbit,10mbit,100mbit -delay 20ms -time 8s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/units"
)

func main() {
	rates := flag.String("rates", "2mbit,5mbit,10mbit,20mbit,50mbit", "bottleneck rates to sweep, comma-separated")
	delay := flag.Duration("delay", 10*time.Millisecond, "one-way delay of the bottleneck")
	dur := flag.Duration("time", 5*time.Second, "length of each step's TCP flow")
	flag.Parse()
	var steps []units.BitRate
	for _, s := range strings.Split(*rates, ",") {
		r, err := units.ParseBitRate(s)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sweep: -rates:", err)
			os.Exit(2)
		}
		steps = append(steps, r)
	}
	if err := run(steps, *delay, *dur); err != nil {
		fmt.Fprintln(os.Stderr, "sweep:", err)
		os.Exit(1)
	}
}

// bdpPackets is one bandwidth-delay product of full frames (at least 10).
func bdpPackets(r units.BitRate, rtt time.Duration) int {
	return max(10, int(r.BitsPerSecond()*rtt.Seconds()/(1514*8)+0.5))
}

func run(steps []units.BitRate, delay, dur time.Duration) (err error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// client -- s1 ==bottleneck== s2 -- server
	t := lab.NewTopology("sweep").
		Host("client").Host("server").Switch("s1").Switch("s2").
		Link("client", "s1").
		Link("s1", "s2", lab.Rate(steps[0]), lab.Delay(delay)).
		Link("server", "s2")
	l, err := lab.Up(ctx, t, lab.Options{})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, l.Down()) }()

	const row = "%8s %8s %14s %14s %12s %10s %8s\n"
	fmt.Printf(row, "rate", "queue", "capacity", "goodput", "of capacity", "srtt mean", "retrans")
	for _, r := range steps {
		q := bdpPackets(r, 2*delay)
		if err := l.SetLink("s1-s2", lab.Rate(r), lab.Queue(q)); err != nil {
			return err
		}
		res, err := l.Traffic(ctx, lab.Flow{Client: "client", Server: "server", Duration: dur})
		if err != nil {
			return err
		}
		s := res.Summary[0]
		capacity := r.BitsPerSecond() * 1448 / 1514
		srtt, retr := "-", "-"
		if s.SRTTMs != nil {
			srtt = fmt.Sprintf("%.1f ms", s.SRTTMs.Mean)
		}
		if s.RetransRatio != nil {
			retr = fmt.Sprintf("%.2f %%", 100**s.RetransRatio)
		}
		fmt.Printf(row, r, fmt.Sprintf("%d pkt", q), fmt.Sprintf("%.3f Mbit/s", capacity/1e6),
			fmt.Sprintf("%.3f Mbit/s", s.SteadyGoodputBps/1e6), fmt.Sprintf("%.3f", s.SteadyGoodputBps/capacity), srtt, retr)
	}
	return nil
}
