package traffic

import (
	"sync"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/emu"
)

// trackPeriod is how often a run samples its moving nodes.
const trackPeriod = 250 * time.Millisecond

// trackWatch samples the lab's moving nodes (topo mobility:) while the
// flows run: where each is, its SNR at its AP and its data rate, as the
// medium has them.
type trackWatch struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	at   []time.Time
	out  []analysis.WiFiPlace
}

// watchTrack starts sampling; nil when no node of the lab moves.
func watchTrack(st *emu.State) *trackWatch {
	if st.Medium == nil {
		return nil
	}
	peer := map[string]string{} // moving node → the node whose SNR counts
	for _, n := range st.Spec.Nodes {
		if n.Mobility == nil {
			continue
		}
		peer[n.Name] = ""
		if n.Station != nil {
			peer[n.Name] = n.Station.AP
		}
	}
	if len(peer) == 0 {
		return nil
	}
	w := &trackWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tk := time.NewTicker(trackPeriod)
		defer tk.Stop()
		for {
			w.sample(st.Lab, peer)
			select {
			case <-w.stop:
				return
			case <-tk.C:
			}
		}
	}()
	return w
}

func (w *trackWatch) sample(lab string, peer map[string]string) {
	ms, err := emu.LabMediumStats(lab)
	if err != nil {
		return
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for node, ap := range peer {
		p := analysis.WiFiPlace{Node: node, Pos: ms.Positions[node], Rate: ms.Radios[node].LastDataRate}
		if now := ms.Assoc[node]; now != "" { // the engine's: a station may roam
			ap, p.AP = now, now
		}
		for _, l := range ms.Links {
			if l.From == node && l.To == ap {
				p.SNRdB = l.SNRdB
			}
		}
		w.at = append(w.at, now)
		w.out = append(w.out, p)
	}
}

// finish stops sampling and returns the samples, timed from t0.
func (w *trackWatch) finish(t0 time.Time) []analysis.WiFiPlace {
	if w == nil {
		return nil
	}
	close(w.stop)
	<-w.done
	for i := range w.out {
		w.out[i].TS = w.at[i].Sub(t0).Seconds()
	}
	return w.out
}
