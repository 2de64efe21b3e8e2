package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/units"
	"github.com/emuctl/emuctl/wifi/model"
	"github.com/spf13/cobra"
)

// wifiModelOpts are `emuctl model wifi`'s settings.
type wifiModelOpts struct {
	mode, rate, band, gi, proto, ampdu, qos, ac, pathloss string
	width, nss, stations, ackEvery, payload, window       int
	retryLimit                                            int
	distance, exponent, txpower, noiseFigure, snr, detect float64
	snrSet, stationsSet                                   bool
	duration                                              string
	seed                                                  uint64
	json                                                  bool
	engine, positions                                     string
	hidden                                                bool
}

// wifiModelOut is the JSON `emuctl model wifi --json` prints.
type wifiModelOut struct {
	Engine         string    `json:"engine"`
	Hidden         bool      `json:"hidden,omitempty"`
	Mode           string    `json:"mode"`
	Band           string    `json:"band"`
	Rate           string    `json:"rate"`
	PhyRateMbps    float64   `json:"phy_rate_mbps"`
	Stations       int       `json:"stations"`
	Proto          string    `json:"proto"`
	PayloadBytes   int       `json:"payload_bytes"`
	AckEvery       int       `json:"ack_every,omitempty"`
	AMPDU          bool      `json:"ampdu"`
	QoS            bool      `json:"qos"`
	AC             string    `json:"ac"`
	MPDUBytes      int       `json:"mpdu_bytes"`
	MPDUsPerPPDU   float64   `json:"mpdus_per_ppdu"`
	ExchangeUs     float64   `json:"exchange_us"`
	AckExchangeUs  float64   `json:"tcp_ack_exchange_us,omitempty"`
	GoodputMbps    float64   `json:"goodput_mbps"`
	PerStationMbps []float64 `json:"per_station_mbps"`
	CollisionP     float64   `json:"collision_p"`
	Retries        int       `json:"retries"`
	Dropped        int       `json:"dropped"`
	AnalyticMbps   float64   `json:"analytic_mbps"`
	BianchiMbps    *float64  `json:"bianchi_mbps,omitempty"`
	BianchiP       *float64  `json:"bianchi_collision_p,omitempty"`
	SNRdB          *float64  `json:"snr_db,omitempty"`
	RxDBm          *float64  `json:"rx_dbm,omitempty"`
	NoiseDBm       *float64  `json:"noise_dbm,omitempty"`
	PER            float64   `json:"per"`
	SimulatedS     float64   `json:"simulated_s"`
	Seed           uint64    `json:"seed"`

	exchange model.Analytic
	mac      model.MAC
	r        model.Rate
	sim      model.SimResult
}

func newModelWifiCmd() *cobra.Command {
	o := wifiModelOpts{}
	cmd := &cobra.Command{
		Use:   "wifi",
		Short: "802.11 airtime and saturation throughput: what a Wi-Fi hop delivers, no kernel needed",
		Long: `Predicts what one Wi-Fi channel delivers with emuctl's pure 802.11 model
(package wifi/model): the airtime of one exchange (AIFS, mean backoff, the
PPDU, SIFS, ACK or Block Ack at the control-response rate), the analytic
goodput of one station, Bianchi's saturation model for UDP, and a
discrete-event DCF/EDCA simulation of --stations saturated senders
(collisions, CW doubling, retries, per-MPDU errors from the SNR with ns-3's
YansErrorRateModel, A-MPDU with Block Ack, TCP ACKs contending from the
access point). Traffic flows from the stations to the access point.

The link's SNR comes from --snr, or from --distance with a path-loss model
(--pathloss logdistance|friis|itu-indoor, ns-3's defaults: exponent 3,
46.6777 dB at 1 m), --txpower and the noise floor (kTB over the rate's
channel width + --noise-figure, as ns-3 counts it);
without either the channel is error-free.

--engine picks what runs the stations:
  sim     (default) the saturated simulation: one shared channel, every
          node hears every other, each station's link at the SNR above.
  medium  the event-driven medium a lab's radios use (wifi/model.Medium):
          every node is a radio at a position — the access point at the
          origin, the stations on a circle of radius --distance (1 m by
          default) around it, as ns-3's wifi-ref places them, or where
          --positions says — and each radio hears the others by the path
          loss (or all at --snr), with its own carrier sense (CCA
          −82/−62 dBm), preamble detection (--detect-dbm) and SINR.
          --hidden cuts the links between stations: each still reaches
          the access point, none hears another (hidden stations).
          collision_p is then the share of the stations' PPDUs that got
          no ACK or Block Ack back (ns-3's definition in validate/ns3).

Not modelled: RTS/CTS, TXOP bursts, rate control (the rate is fixed),
OFDMA/MU-MIMO, 802.11be; hidden stations only with --engine medium.`,
		Example: `  emuctl model wifi --mode g --rate 54mbit
  emuctl model wifi --mode a --rate 54mbit --proto tcp --ack-every 1
  emuctl model wifi --mode n --rate mcs7 --ampdu on --proto tcp
  emuctl model wifi --mode a --rate 54mbit --stations 10 --json
  emuctl model wifi --mode a --rate 54mbit --distance 40
  emuctl model wifi --mode ac --rate mcs9 --width 80 --nss 2 --gi short
  emuctl model wifi --mode a --rate 54mbit --stations 2 --engine medium --hidden
  emuctl model wifi --mode a --rate 6mbit --engine medium --positions '10,0;-10,0;0,40'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.snrSet = cmd.Flags().Changed("snr")
			o.stationsSet = cmd.Flags().Changed("stations")
			if !cmd.Flags().Changed("payload") {
				o.payload = map[string]int{"tcp": 1448}[o.proto]
				if o.payload == 0 {
					o.payload = 1472
				}
			}
			out, err := runWifiModel(o, cmd.Flags().Changed("ampdu"))
			if err != nil {
				return err
			}
			if o.json {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			printWifiModel(cmd.OutOrStdout(), out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.mode, "mode", "g", "mode: a, b, g, n, ac or ax")
	f.StringVar(&o.rate, "rate", "", "data rate: Mbit/s for a/b/g (54mbit, 11mbit) or mcsN for n/ac/ax (default: the mode's top rate)")
	f.StringVar(&o.band, "band", "", "band: 2.4, 5 or 6 (GHz; default: 2.4 for b/g, 5 otherwise)")
	f.IntVar(&o.width, "width", 20, "channel width in MHz (n: 20/40; ac/ax: 20/40/80/160)")
	f.IntVar(&o.nss, "nss", 1, "spatial streams (ac/ax; HT MCS numbers carry their own)")
	f.StringVar(&o.gi, "gi", "long", "guard interval: long (800 ns), short (400 ns; n/ac), or 800ns/1600ns/3200ns (ax)")
	f.IntVar(&o.stations, "stations", 1, "saturated stations sending to the access point")
	f.StringVar(&o.proto, "proto", "udp", "traffic: udp or tcp")
	f.IntVar(&o.ackEvery, "ack-every", 2, "TCP: data segments per ACK (1 = quickack, 2 = delayed ACK)")
	f.StringVar(&o.ampdu, "ampdu", "on", "A-MPDU aggregation for n/ac/ax: on or off")
	f.IntVar(&o.window, "window", 64, "Block Ack window (MPDUs per A-MPDU at most)")
	f.IntVar(&o.payload, "payload", 1472, "UDP payload or TCP MSS in bytes (default 1472 UDP, 1448 TCP)")
	f.StringVar(&o.qos, "qos", "on", "QoS (WMM) data frames and EDCA: on, or off for plain DCF (DIFS, 24-byte headers)")
	f.StringVar(&o.ac, "ac", "BE", "access category: BE, BK, VI, VO")
	f.IntVar(&o.retryLimit, "retry-limit", 11, "attempts per MPDU before it is dropped (mac80211_hwsim: 11; ns-3: 7)")
	f.Float64Var(&o.distance, "distance", 0, "station-AP distance in metres (SNR from the path-loss model)")
	f.StringVar(&o.pathloss, "pathloss", "logdistance", "path-loss model: logdistance, friis or itu-indoor")
	f.Float64Var(&o.exponent, "exponent", 3, "log-distance path-loss exponent")
	f.Float64Var(&o.txpower, "txpower", model.DefaultTxPowerDBm, "transmit power in dBm")
	f.Float64Var(&o.noiseFigure, "noise-figure", model.DefaultNoiseFigureDB, "receiver noise figure in dB")
	f.Float64Var(&o.snr, "snr", 0, "link SNR in dB (instead of --distance)")
	f.Float64Var(&o.detect, "detect-dbm", model.DefaultDetectDBm, "weakest received power whose preamble is detected (ns-3's default −82 dBm, also needing 4 dB SNR; −101: only the receiver's sensitivity)")
	f.StringVar(&o.duration, "duration", "10s", "simulated time")
	f.Uint64Var(&o.seed, "seed", 1, "random seed of the simulation")
	f.BoolVar(&o.json, "json", false, "print JSON")
	f.StringVar(&o.engine, "engine", "sim", "what runs the stations: sim (shared channel) or medium (radios at positions, per-radio carrier sense and SINR)")
	f.BoolVar(&o.hidden, "hidden", false, "--engine medium: the stations cannot hear one another (each still reaches the access point)")
	f.StringVar(&o.positions, "positions", "", "--engine medium: station positions in metres, x,y[,z] per station, ';' between stations (the access point is at the origin)")
	for flag, values := range map[string][]string{"mode": {"a", "b", "g", "n", "ac", "ax"}, "band": {"2.4", "5", "6"},
		"gi": {"long", "short", "800ns", "1600ns", "3200ns"}, "proto": {"udp", "tcp"}, "ampdu": {"on", "off"}, "qos": {"on", "off"},
		"ac": {"BE", "BK", "VI", "VO"}, "pathloss": {"logdistance", "friis", "itu-indoor"}, "engine": {"sim", "medium"}} {
		completeFlag(cmd, flag, fixed(values...))
	}
	return cmd
}

func onOff(name, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on", "true", "yes", "1":
		return true, nil
	case "off", "false", "no", "0":
		return false, nil
	}
	return false, fmt.Errorf("--%s %q: want on or off", name, v)
}

func runWifiModel(o wifiModelOpts, ampduSet bool) (wifiModelOut, error) {
	mode, err := model.ParseMode(o.mode)
	if err != nil {
		return wifiModelOut{}, fmt.Errorf("--mode: %w", err)
	}
	band := mode.DefaultBand()
	switch o.band {
	case "":
	case "2.4", "2.4ghz", "2g4":
		band = model.Band2G4
	case "5", "5ghz":
		band = model.Band5G
	case "6", "6ghz":
		band = model.Band6G
	default:
		return wifiModelOut{}, fmt.Errorf("--band %q: want 2.4, 5 or 6", o.band)
	}
	if (mode == model.ModeB || mode == model.ModeG) && band != model.Band2G4 {
		return wifiModelOut{}, fmt.Errorf("--band: mode %s runs on 2.4 GHz only", mode)
	}
	if mode == model.ModeA && band != model.Band5G || mode == model.ModeAC && band == model.Band2G4 {
		return wifiModelOut{}, fmt.Errorf("--band: mode %s does not run on %v", mode, band)
	}
	var gi time.Duration
	switch strings.ToLower(o.gi) {
	case "long", "":
		gi = 800 * time.Nanosecond
	case "short":
		gi = 400 * time.Nanosecond
	default:
		d, err := time.ParseDuration(o.gi)
		if err != nil {
			return wifiModelOut{}, fmt.Errorf("--gi %q: want long, short, 800ns, 1600ns or 3200ns", o.gi)
		}
		gi = d
	}
	rate := o.rate
	if rate == "" {
		rate = map[model.Mode]string{model.ModeA: "54mbit", model.ModeB: "11mbit", model.ModeG: "54mbit",
			model.ModeN: "mcs7", model.ModeAC: "mcs8", model.ModeAX: "mcs11"}[mode]
	}
	r, err := model.ParseRate(mode, rate, o.width, o.nss, gi)
	if err != nil {
		return wifiModelOut{}, fmt.Errorf("--rate: %w", err)
	}
	if (mode == model.ModeN) && o.width > 40 {
		return wifiModelOut{}, fmt.Errorf("--width: 802.11n channels are 20 or 40 MHz")
	}
	qos, err := onOff("qos", o.qos)
	if err != nil {
		return wifiModelOut{}, err
	}
	ampdu, err := onOff("ampdu", o.ampdu)
	if err != nil {
		return wifiModelOut{}, err
	}
	if r.Class < model.HT {
		if ampduSet && ampdu {
			return wifiModelOut{}, fmt.Errorf("--ampdu on: A-MPDU needs mode n, ac or ax (rate %v)", r)
		}
		ampdu = false
	}
	if ampdu && !qos {
		return wifiModelOut{}, fmt.Errorf("--ampdu on needs --qos on (Block Ack agreements are per QoS TID)")
	}
	ac, err := model.ParseAC(o.ac)
	if err != nil {
		return wifiModelOut{}, fmt.Errorf("--ac: %w", err)
	}
	dur, err := units.ParseDuration(o.duration)
	if err != nil || dur <= 0 || dur > time.Hour {
		return wifiModelOut{}, fmt.Errorf("--duration %q: want a positive duration up to 1h (e.g. 10s)", o.duration)
	}
	if o.retryLimit < 1 || o.retryLimit > 32 {
		return wifiModelOut{}, fmt.Errorf("--retry-limit %d: want 1–32", o.retryLimit)
	}
	if o.window < 1 || o.window > 64 {
		return wifiModelOut{}, fmt.Errorf("--window %d: want 1–64", o.window)
	}
	if o.distance < 0 || o.distance > 100000 {
		return wifiModelOut{}, fmt.Errorf("--distance %g: want 0–100000 m", o.distance)
	}
	var pos [][3]float64
	switch {
	case o.engine != "sim" && o.engine != "medium":
		return wifiModelOut{}, fmt.Errorf("--engine %q: want sim or medium", o.engine)
	case o.engine == "sim" && (o.hidden || o.positions != ""):
		return wifiModelOut{}, fmt.Errorf("--hidden and --positions need --engine medium (the simulation has every node hear every other)")
	case o.positions != "":
		if pos, err = parsePositions(o.positions); err != nil {
			return wifiModelOut{}, fmt.Errorf("--positions: %w", err)
		}
		if o.stationsSet && o.stations != len(pos) {
			return wifiModelOut{}, fmt.Errorf("--positions places %d station(s), --stations says %d", len(pos), o.stations)
		}
		o.stations = len(pos)
	}
	mac := model.DefaultMAC(mode, band, qos)
	mac.RetryLimit = o.retryLimit
	s := model.Scenario{Mode: mode, MAC: mac, Rate: r, Stations: o.stations, AC: ac, Proto: o.proto,
		Payload: o.payload, AckEvery: o.ackEvery, AMPDU: ampdu, Window: o.window, Duration: dur, Seed: o.seed}
	if err := s.Validate(); err != nil {
		return wifiModelOut{}, err
	}
	out := wifiModelOut{Engine: o.engine, Hidden: o.hidden, Mode: string(mode), Band: band.String(), Rate: r.String(), PhyRateMbps: round3(r.Mbps()),
		Stations: o.stations, Proto: o.proto, PayloadBytes: o.payload, AMPDU: ampdu, QoS: qos, AC: ac.String(),
		SimulatedS: dur.Seconds(), Seed: o.seed, mac: mac, r: r}
	if o.proto == "tcp" {
		out.AckEvery = o.ackEvery
	}
	snr := math.Inf(1)
	if o.snrSet {
		snr = o.snr
	} else if o.distance > 0 {
		lb := o.budget(band, r)
		l, err := lb.At(o.distance)
		if err != nil {
			return wifiModelOut{}, fmt.Errorf("--pathloss: %w", err)
		}
		snr = l.SNRdB
		if !o.detected(l) {
			snr = -100 // the receiver does not even detect the frames
		}
		out.RxDBm, out.NoiseDBm = ptrF(round3(l.RxDBm)), ptrF(round3(lb.NoiseDBm()))
	}
	if !math.IsInf(snr, 1) {
		out.SNRdB = ptrF(round3(snr))
		s.SNRdB = make([]float64, o.stations)
		for i := range s.SNRdB {
			s.SNRdB[i] = snr
		}
	}
	a, err := model.Predict(s)
	if err != nil {
		return wifiModelOut{}, err
	}
	out.exchange = a
	out.AnalyticMbps = round3(a.GoodputMbps)
	out.ExchangeUs = float64(a.Data.Total()) / 1e3
	if a.Ack != nil {
		out.AckExchangeUs = float64(a.Ack.Total()) / 1e3
	}
	mpdu := s.MAC.MPDUBytes(model.IPv4Bytes + map[string]int{"udp": model.UDPBytes, "tcp": model.TCPBytes}[o.proto] + o.payload)
	out.MPDUBytes = mpdu
	if !math.IsInf(snr, 1) {
		out.PER = round6(model.PER(r, a.Data.PSDU/a.Data.MPDUs, model.DBToLinear(snr)))
	}
	if o.proto == "udp" && !ampdu {
		b, err := model.SolveBianchi(s)
		if err == nil {
			out.BianchiMbps, out.BianchiP = ptrF(round3(b.GoodputMbps)), ptrF(round6(b.P))
		}
	}
	var sim model.SimResult
	if o.engine == "medium" {
		link, err := mediumLink(o, band, r, pos)
		if err != nil {
			return wifiModelOut{}, err
		}
		cfg := model.MediumConfig{DetectDBm: o.detect}
		if o.detect <= model.DefaultRxSensitivity {
			cfg.NoDetection = true // ns-3 without a preamble detection model
		}
		sim, err = model.SimulateMedium(s, link, cfg)
		if err != nil {
			return wifiModelOut{}, err
		}
	} else if sim, err = model.Simulate(s); err != nil {
		return wifiModelOut{}, err
	}
	out.sim = sim
	out.GoodputMbps = round3(sim.GoodputMbps)
	out.CollisionP = round6(sim.CollisionP)
	out.MPDUsPerPPDU = round3(sim.MPDUsPerPPDU)
	for i, nd := range sim.Nodes {
		out.Retries += nd.Retries
		out.Dropped += nd.Dropped
		if i < o.stations {
			out.PerStationMbps = append(out.PerStationMbps, round3(nd.GoodputMbps))
		}
	}
	return out, nil
}

// parsePositions reads "x,y[,z];x,y[,z];…" (metres).
func parsePositions(v string) ([][3]float64, error) {
	var out [][3]float64
	for _, st := range strings.Split(v, ";") {
		st = strings.TrimSpace(st)
		if st == "" {
			continue
		}
		parts := strings.Split(st, ",")
		if len(parts) < 2 || len(parts) > 3 {
			return nil, fmt.Errorf("%q: want x,y or x,y,z", st)
		}
		var p [3]float64
		for i, s := range parts {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || math.IsNaN(f) || math.Abs(f) > 100000 {
				return nil, fmt.Errorf("%q: %q is not a coordinate within ±100 km", st, s)
			}
			p[i] = f
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no station positions")
	}
	return out, nil
}

// mediumLink is what every node's frames look like at every other for
// --engine medium: stations 0..n-1 at pos (or on a circle of radius
// --distance, 1 m by default), the access point n at the origin; the
// path loss from the flags, or --snr on every link; with --hidden no
// station reaches another.
func mediumLink(o wifiModelOpts, band model.Band, r model.Rate, pos [][3]float64) (func(tx, rx int) model.Link, error) {
	n := o.stations
	at := make([][3]float64, n+1) // the access point last, at the origin
	if pos != nil {
		copy(at, pos)
	} else {
		d := o.distance
		if d == 0 {
			d = 1
		}
		for i := 0; i < n; i++ {
			a := 2 * math.Pi * float64(i) / float64(n)
			at[i] = [3]float64{d * math.Cos(a), d * math.Sin(a), 0}
		}
	}
	lb := o.budget(band, r)
	links := make([]model.Link, (n+1)*(n+1))
	for tx := 0; tx <= n; tx++ {
		for rx := 0; rx <= n; rx++ {
			if tx == rx || o.hidden && tx < n && rx < n {
				continue
			}
			if o.snrSet {
				links[tx*(n+1)+rx] = lb.AtSNR(o.snr)
				continue
			}
			l, err := lb.Between(at[tx], at[rx])
			if err != nil {
				return nil, fmt.Errorf("--pathloss: %w", err)
			}
			links[tx*(n+1)+rx] = l
		}
	}
	return func(tx, rx int) model.Link { return links[tx*(n+1)+rx] }, nil
}

// budget is the link budget of every link of the run: the flags' path
// loss on the band's first channel, --txpower, no antenna gain, and the
// noise over the width of the one rate the run sends (as ns-3 counts
// noise for that rate's PPDUs).
func (o wifiModelOpts) budget(band model.Band, r model.Rate) model.LinkBudget {
	ch := map[model.Band]int{model.Band2G4: 1, model.Band5G: 36, model.Band6G: 1}[band]
	pl := model.DefaultPathLoss(model.ChannelMHz(band, ch))
	pl.Model, pl.Exponent = o.pathloss, o.exponent
	return model.LinkBudget{TxPowerDBm: o.txpower, PathLoss: pl, NoiseFigureDB: o.noiseFigure, NoiseWidthMHz: max(r.WidthMHz, 20)}
}

// detected: the access point detects a station's frames — ns-3's
// threshold preamble detection at --detect-dbm and 4 dB SNR, or with
// --detect-dbm at or below the receiver's sensitivity (no preamble
// detection model) whatever reaches it.
func (o wifiModelOpts) detected(l model.Link) bool {
	if o.detect <= model.DefaultRxSensitivity {
		return l.OK
	}
	return l.Detected(o.detect, model.DefaultDetectSNRdB)
}

func ptrF(v float64) *float64  { return &v }
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func usStr(d time.Duration) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", float64(d)/1e3), "0"), ".")
}

func printWifiModel(w io.Writer, o wifiModelOut) {
	ac, _ := model.ParseAC(o.AC)
	ed := o.mac.Param[ac]
	access := fmt.Sprintf("DCF (DIFS %s µs, CW %d–%d)", usStr(o.mac.AIFS(model.BE)), ed.CWMin, ed.CWMax)
	if o.QoS {
		access = fmt.Sprintf("EDCA %s (AIFS %s µs, CW %d–%d)", o.AC, usStr(o.mac.AIFS(ac)), ed.CWMin, ed.CWMax)
	}
	traffic := fmt.Sprintf("UDP %d B", o.PayloadBytes)
	if o.Proto == "tcp" {
		traffic = fmt.Sprintf("TCP MSS %d B, one ACK per %d segments", o.PayloadBytes, o.AckEvery)
	}
	agg := "no A-MPDU"
	if o.AMPDU {
		agg = fmt.Sprintf("A-MPDU up to %d MPDUs", o.exchange.Data.MPDUs)
	}
	fmt.Fprintf(w, "802.11%s %s, %s, slot %s µs, %s; %d station(s) → AP, %s, %s\n", o.Mode, o.r, o.Band,
		usStr(o.mac.Slot), access, o.Stations, traffic, agg)
	exch := func(name string, e model.Exchange) {
		resp := "ACK"
		if e.MPDUs > 1 {
			resp = "Block Ack"
		}
		cr := model.ControlRate(o.r, o.mac.BasicRates)
		fmt.Fprintf(w, "  %s: AIFS %s + backoff %s + PPDU %s (%d MPDU, %d B) + SIFS %s + %s %s (%v) = %s µs\n", name,
			usStr(e.AIFS), usStr(e.Backoff), usStr(e.PPDU), e.MPDUs, e.PSDU, usStr(e.SIFS), resp, usStr(e.Resp), cr, usStr(e.Total()))
	}
	exch("data exchange", o.exchange.Data)
	if o.exchange.Ack != nil {
		exch("TCP ACK exchange", *o.exchange.Ack)
	}
	fmt.Fprintf(w, "  analytic, one station, mean backoff, no collisions: %.2f Mbit/s\n", o.AnalyticMbps)
	if o.BianchiMbps != nil {
		fmt.Fprintf(w, "  Bianchi saturation model, %d station(s): %.2f Mbit/s, collision p %.3f\n", o.Stations, *o.BianchiMbps, *o.BianchiP)
	}
	if o.SNRdB != nil {
		if o.RxDBm != nil {
			fmt.Fprintf(w, "  link: received %.1f dBm, noise %.1f dBm, SNR %.1f dB, PER of one %d-byte MPDU %.4g\n", *o.RxDBm, *o.NoiseDBm, *o.SNRdB, o.MPDUBytes, o.PER)
		} else {
			fmt.Fprintf(w, "  link: SNR %.1f dB, PER of one %d-byte MPDU %.4g\n", *o.SNRdB, o.MPDUBytes, o.PER)
		}
	}
	engine := "DCF/EDCA"
	if o.Engine == "medium" {
		engine = "medium, radios at positions"
		if o.Hidden {
			engine = "medium, stations hidden from each other"
		}
	}
	fmt.Fprintf(w, "  simulated (%s, %gs, seed %d): %.2f Mbit/s", engine, o.SimulatedS, o.Seed, o.GoodputMbps)
	if o.Stations > 1 {
		parts := make([]string, len(o.PerStationMbps))
		for i, v := range o.PerStationMbps {
			parts[i] = fmt.Sprintf("%.2f", v)
		}
		fmt.Fprintf(w, " (per station %s)", strings.Join(parts, ", "))
	}
	coll := "collision p"
	if o.Engine == "medium" {
		coll = "unacknowledged PPDUs"
	}
	fmt.Fprintf(w, ", %s %.3f, %.1f MPDUs per PPDU, %d retries, %d dropped\n", coll, o.CollisionP, o.MPDUsPerPPDU, o.Retries, o.Dropped)
}
