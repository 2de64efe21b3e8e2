package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/wifi"
)

// TestWiFiCLI: the Wi-Fi commands as a user types them, on the engine
// backend (this machine has no mac80211_hwsim; where it has, the lab pins
// the engine so the test means the same everywhere): up of the example
// topology, ls with the medium's table, wifi show --json, a station moved
// out of range and back, a pair's SNR overridden, a capture of the medium
// that tshark reads as 802.11 with radiotap, and bad input refused.
func TestWiFiCLI(t *testing.T) {
	needRoot(t)
	topoFile := "topologies/wifi.yaml"
	if wifi.ProbeHwsim() == nil {
		t.Skip("this kernel has mac80211_hwsim: topologies/wifi.yaml runs on hwsim here (the kernel lab tests that path)")
	}
	must(t, run(t, "", "up", "--name", "twcli", topoFile))
	t.Cleanup(func() { run(t, "", "down", "twcli") })

	ls := must(t, run(t, "", "ls", "twcli")).stdout
	for _, want := range []string{"none (engine backend)", "COMPLETED", "MEDIUM", "AIRTIME", "SNR TO"} {
		if !strings.Contains(ls, want) {
			t.Errorf("ls twcli lacks %q:\n%s", want, ls)
		}
	}
	must(t, run(t, "", "exec", "sta1", "--", "ping", "-c3", "-i0.2", "-W2", "sta2"))

	var show struct {
		Backend string `json:"backend"`
		WiFi    []struct {
			Node   string `json:"node"`
			Medium *struct {
				Frames   uint64     `json:"frames"`
				Position [3]float64 `json:"position"`
				Links    []struct {
					To    string  `json:"to"`
					SNRdB float64 `json:"snr_db"`
				} `json:"links"`
			} `json:"medium"`
		} `json:"wifi"`
	}
	if err := json.Unmarshal([]byte(must(t, run(t, "", "wifi", "show", "--json")).stdout), &show); err != nil {
		t.Fatal(err)
	}
	if show.Backend != "engine" || len(show.WiFi) != 3 {
		t.Fatalf("wifi show --json: %+v", show)
	}
	for _, w := range show.WiFi {
		if w.Medium == nil || (w.Node == "sta1" && w.Medium.Frames == 0) {
			t.Errorf("%s: medium view %+v (sta1 has pinged)", w.Node, w.Medium)
		}
	}

	must(t, run(t, "", "wifi", "move", "sta1", "4000,0"))
	if r := run(t, "", "exec", "sta1", "--", "ping", "-c2", "-i0.2", "-W1", "srv"); r.code == 0 {
		t.Error("sta1 4 km from its AP still pings the server")
	}
	must(t, run(t, "", "wifi", "pair", "sta1", "ap1", "--snr", "30dB"))
	must(t, run(t, "", "exec", "sta1", "--", "ping", "-c2", "-i0.2", "-W2", "srv"))
	must(t, run(t, "", "wifi", "pair", "sta1", "ap1", "--clear"))
	must(t, run(t, "", "wifi", "move", "sta1", "3,0,0"))
	must(t, run(t, "", "exec", "sta1", "--", "ping", "-c2", "-i0.2", "-W2", "srv"))

	// a station joins while the lab runs, and leaves
	must(t, run(t, "", "node", "add", "sta9", "--kind", "station", "--ap", "ap1", "--position", "2,2"))
	must(t, run(t, "", "exec", "sta9", "--", "ping", "-c2", "-i0.2", "-W2", "srv"))
	if out := must(t, run(t, "", "wifi", "show")).stdout; !strings.Contains(out, "sta9") {
		t.Errorf("wifi show lacks the added station:\n%s", out)
	}
	if r := run(t, "", "node", "add", "sta8", "--ap", "ap1"); r.code == 0 || !strings.Contains(r.stderr, "--ap is for --kind station") {
		t.Errorf("node add --ap without --kind station: exit %d, %s", r.code, r.stderr)
	}
	must(t, run(t, "", "node", "del", "sta9"))
	if out := must(t, run(t, "", "wifi", "show")).stdout; strings.Contains(out, "sta9") {
		t.Errorf("wifi show still lists the removed station:\n%s", out)
	}

	for _, bad := range [][]string{
		{"wifi", "move", "ghost", "1,2"},
		{"wifi", "move", "sta1", "1"},
		{"wifi", "pair", "sta1", "ap1"},
		{"wifi", "pair", "sta1", "ap1", "--snr", "300dB"},
		{"capture", "medium", "--filter", "tcp", "-w", "x.pcapng"},
	} {
		if r := run(t, "", bad...); r.code == 0 || r.stderr == "" {
			t.Errorf("emuctl %v: exit %d, stderr %q: want an error", bad, r.code, r.stderr)
		}
	}

	pcap := filepath.Join(t.TempDir(), "air.pcapng")
	done := make(chan result, 1)
	go func() { done <- run(t, "", "capture", "medium", "--duration", "6s", "-w", pcap) }()
	// ping once the capture is live (its file has the pcapng header), well
	// inside its window: started together, the first request could go out
	// before the capture and the last reply after it
	for t0 := time.Now(); time.Since(t0) < 3*time.Second; time.Sleep(20 * time.Millisecond) {
		if fi, err := os.Stat(pcap); err == nil && fi.Size() > 0 {
			break
		}
	}
	must(t, run(t, "", "exec", "sta1", "--", "ping", "-c5", "-i0.2", "-W2", "srv"))
	c := must(t, <-done)
	if !strings.Contains(c.stderr, "bytes of pcapng written") {
		t.Errorf("capture medium: %s", c.stderr)
	}
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Log("tshark not installed (apt-get install tshark): the capture is not read back")
		return
	}
	out, err := exec.Command("tshark", "-r", pcap, "-Y", "icmp", "-T", "fields", "-e", "radiotap.datarate", "-e", "wlan.ta", "-e", "ip.src").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	t.Logf("tshark: %d ICMP frames on the air, e.g. %q", len(lines), lines[0])
	// 5 requests and 5 replies, each once on the air (no retries here)
	if len(lines) < 10 {
		t.Errorf("tshark found %d ICMP frames on the medium, want the 10 of 5 pings:\n%s", len(lines), out)
	}
}

// TestWiFiRoamingCLI: topologies/wifi-roaming.yaml as a user would try
// it (engine backend): the station starts on ap1, `wifi move` takes it
// next to ap2 and it hands over — `wifi show` says so and lists the
// handover, --json carries it — and the server still reaches it through
// ap2 (the switch learned where it is); the API's event stream tells the
// handover.
func TestWiFiRoamingCLI(t *testing.T) {
	needRoot(t)
	must(t, run(t, "", "up", "--name", "twroamcli", "topologies/wifi-roaming.yaml"))
	t.Cleanup(func() { run(t, "", "down", "twroamcli") })
	must(t, run(t, "", "exec", "-l", "twroamcli", "srv", "--", "ping", "-c2", "-i0.2", "-W2", "sta1"))
	show := must(t, run(t, "", "wifi", "show", "-l", "twroamcli")).stdout
	if !strings.Contains(show, "sta1 roams in campus (ap1, ap2): on ap1 now, 0 handover(s)") {
		t.Errorf("wifi show before the move:\n%s", show)
	}

	// the API's event stream, subscribed before the move
	api := exec.Command(bin, "api")
	api.Dir = "../.."
	in, _ := api.StdinPipe()
	out, _ := api.StdoutPipe()
	if err := api.Start(); err != nil {
		t.Fatal(err)
	}
	defer api.Process.Kill()
	in.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"events.subscribe","params":{"lab":"twroamcli","interval_ms":100,"counters":false}}` + "\n"))
	events := make(chan string, 16)
	go func() {
		dec := json.NewDecoder(out)
		for {
			var m map[string]any
			if dec.Decode(&m) != nil {
				close(events)
				return
			}
			if p, ok := m["params"].(map[string]any); ok && p["type"] == "wifi-handover" {
				b, _ := json.Marshal(p)
				events <- string(b)
			}
		}
	}()
	time.Sleep(500 * time.Millisecond)

	must(t, run(t, "", "wifi", "move", "-l", "twroamcli", "sta1", "70,0"))
	must(t, run(t, "", "exec", "-l", "twroamcli", "srv", "--", "ping", "-c3", "-i0.2", "-W2", "sta1"))
	show = must(t, run(t, "", "wifi", "show", "-l", "twroamcli")).stdout
	if !strings.Contains(show, "on ap2 now, 1 handover(s)") || !strings.Contains(show, "ap1 → ap2") {
		t.Errorf("wifi show after the move:\n%s", show)
	}
	var js struct {
		WiFi []struct {
			Node      string          `json:"node"`
			AP        string          `json:"ap"`
			Handovers []wifi.Handover `json:"handovers"`
		} `json:"wifi"`
	}
	if err := json.Unmarshal([]byte(must(t, run(t, "", "wifi", "show", "-l", "twroamcli", "--json")).stdout), &js); err != nil {
		t.Fatal(err)
	}
	for _, w := range js.WiFi {
		if w.Node == "sta1" && (w.AP != "ap2" || len(w.Handovers) != 1 || !w.Handovers[0].Done || w.Handovers[0].ToSNRdB <= w.Handovers[0].FromSNRdB) {
			t.Errorf("wifi show --json: sta1 %+v", w)
		}
	}
	select {
	case ev := <-events:
		if !strings.Contains(ev, `"node":"sta1"`) || !strings.Contains(ev, `"a":"ap1"`) || !strings.Contains(ev, `"b":"ap2"`) {
			t.Errorf("the handover's event: %s", ev)
		}
		t.Logf("event: %s", ev)
	case <-time.After(3 * time.Second):
		t.Error("no wifi-handover event within 3 s")
	}
	t.Logf("wifi show:\n%s", show)
}
