package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	golab "github.com/emuctl/emuctl/lab"
)

// uiBench is what bench --ui measured.
type uiBench struct {
	Nodes int `json:"nodes"`
	Pages int `json:"pages"`
	// ServerCPU is the ui server's CPU (its process, % of one core) while
	// the pages watched under traffic; SupervisorCPU the lab supervisor's
	// with and without the pages (it serves the link engines' counters).
	ServerCPU           float64 `json:"server_cpu_pct"`
	SupervisorCPU       float64 `json:"supervisor_cpu_pct"`
	SupervisorCPUAlone  float64 `json:"supervisor_cpu_alone_pct"`
	Events              int     `json:"events"`
	GoodputAlone        float64 `json:"goodput_alone_bps"`
	GoodputWatched      float64 `json:"goodput_watched_bps"`
	GoodputRatioWatched float64 `json:"goodput_ratio"`
}

// benchUILab is a lab of about 200 nodes: a core switch, 14 edge
// switches, 13 hosts on each, and a 50 Mbit/s, 5 ms link from the first
// host to its switch (the link engine, as here) for the flow.
func benchUILab() string {
	var b strings.Builder
	b.WriteString("name: benchui\nnodes:\n  core: {kind: switch}\n")
	for e := 1; e <= 14; e++ {
		fmt.Fprintf(&b, "  e%d: {kind: switch}\n", e)
		for h := 1; h <= 13; h++ {
			fmt.Fprintf(&b, "  h%d_%d: {}\n", e, h)
		}
	}
	b.WriteString("links:\n")
	for e := 1; e <= 14; e++ {
		fmt.Fprintf(&b, "  - {endpoints: [e%d, core]}\n", e)
		for h := 1; h <= 13; h++ {
			if e == 1 && h == 1 {
				b.WriteString("  - {endpoints: [h1_1, e1], link: {rate: 50mbit, delay: 5ms}}\n")
				continue
			}
			fmt.Fprintf(&b, "  - {endpoints: [h%d_%d, e%d]}\n", e, h, e)
		}
	}
	return b.String()
}

// benchLab brings a bench's lab up (once the kernel has freed earlier
// labs' namespaces) and returns it with its supervisor's pid (0: none).
func benchLab(ctx context.Context, file, doc string) (*golab.Lab, int, error) {
	golab.WaitNetnsSettled(30 * time.Second)
	l, err := golab.Up(ctx, golab.YAML(file, []byte(doc)), golab.Options{})
	if err != nil {
		return nil, 0, err
	}
	st, err := golab.ReadState(l.Name())
	if err != nil {
		l.Down()
		return nil, 0, err
	}
	for _, p := range st.Procs {
		if p.Command == "supervisor" {
			return l, p.PID, nil
		}
	}
	return l, 0, nil
}

// flowCPU runs flow on l and returns its steady goodput (bit/s) and
// process pid's CPU meanwhile (% of one core).
func flowCPU(ctx context.Context, l *golab.Lab, flow golab.Flow, pid int) (float64, float64, error) {
	c0, t0 := cpuTicks(pid), time.Now()
	res, err := l.Traffic(ctx, flow)
	if err != nil {
		return 0, 0, err
	}
	return res.Summary[0].SteadyGoodputBps, (cpuTicks(pid) - c0) / time.Since(t0).Seconds(), nil
}

// cpuTicks is a process's user + system time in clock ticks (100 Hz).
func cpuTicks(pid int) float64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return u + k
}

// benchUI: the ui server's CPU while 3 pages watch a 200-node lab under a
// shaped TCP flow (each page's event stream, 4 counters a second, read as
// a browser would), and the flow's goodput with and without them.
func benchUI(asJSON bool) error {
	ctx := context.Background()
	l, sup, err := benchLab(ctx, "benchui.yaml", benchUILab())
	if err != nil {
		return err
	}
	defer l.Down()
	b := uiBench{Nodes: len(l.Nodes()), Pages: 3}
	flow := golab.Flow{Client: "h1_1", Server: "h14_13", Duration: 10 * time.Second}
	measure := func() (float64, float64, error) { return flowCPU(ctx, l, flow, sup) }
	if b.GoodputAlone, b.SupervisorCPUAlone, err = measure(); err != nil {
		return err
	}

	// the server, a process of its own, and three pages' event streams
	self, _ := os.Executable()
	srv := exec.Command(self, "ui", "-l", l.Name())
	out, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { srv.Process.Signal(os.Interrupt); srv.Wait() }()
	sc := bufio.NewScanner(out)
	page := ""
	for page == "" && sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); strings.HasPrefix(t, "http://") {
			page = t
		}
	}
	if page == "" {
		return fmt.Errorf("bench --ui: emuctl ui printed no URL")
	}
	u, _ := url.Parse(page)
	tok := u.Query().Get("token")
	pctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range b.Pages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(pctx, "GET", u.Scheme+"://"+u.Host+"/api/events?token="+url.QueryEscape(tok), nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			r := bufio.NewScanner(resp.Body)
			r.Buffer(make([]byte, 1<<20), 8<<20)
			for r.Scan() {
				if d, ok := strings.CutPrefix(r.Text(), "data: "); ok && json.Valid([]byte(d)) {
					mu.Lock()
					b.Events++
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(2 * time.Second) // the streams are up
	c0, t0 := cpuTicks(srv.Process.Pid), time.Now()
	b.GoodputWatched, b.SupervisorCPU, err = measure()
	b.ServerCPU = (cpuTicks(srv.Process.Pid) - c0) / time.Since(t0).Seconds()
	stop()
	wg.Wait()
	if err != nil {
		return err
	}
	if b.GoodputAlone > 0 {
		b.GoodputRatioWatched = b.GoodputWatched / b.GoodputAlone
	}
	if asJSON {
		return writeJSON(os.Stdout, b)
	}
	fmt.Printf("emuctl ui on a %d-node lab, %d pages watching (%d events) under a 50 Mbit/s TCP flow:\n", b.Nodes, b.Pages, b.Events)
	fmt.Printf("  the ui server's CPU: %.1f %% of one core (target ≤ 5 %%)\n", b.ServerCPU)
	fmt.Printf("  the lab supervisor's CPU: %.1f %% with the pages, %.1f %% without\n", b.SupervisorCPU, b.SupervisorCPUAlone)
	fmt.Printf("  goodput: %.2f Mbit/s watched, %.2f alone: ratio %.3f (target ≥ 0.99)\n", b.GoodputWatched/1e6, b.GoodputAlone/1e6, b.GoodputRatioWatched)
	return nil
}
