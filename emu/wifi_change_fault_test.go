package emu

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/topo"
)

func wifiChangeLab(lab string) string {
	return "name: " + lab + `
wifi: {backend: engine}
nodes:
  ap1: {kind: ap, wifi: {mode: g, channel: 1}}
  sta1: {kind: station, position: [3, 0]}
  srv: {}
links:
  - endpoints: [ap1, srv]
`
}

// A station add that fails after its radio joined the medium is rolled
// back: the radio leaves the medium (its slot kept, marked gone), its port
// and namespace go, and the same station then joins on the next radio.
// Killed (kill -9) after its radio joined, the lab is still removed
// completely by down and clean.
func TestWiFiStationChangeFaults(t *testing.T) {
	needRoot(t)
	ctx := context.Background()
	const lab = "twcf"
	up(t, loadYAML(t, lab, wifiChangeLab(lab)), Options{})
	req := topo.NodeRequest{Name: "sta2", Kind: "station", AP: "ap1", Position: &[3]float64{0, 3, 0}}
	_, err := AddNode(ctx, lab, req, Options{FaultAt: "change-wait"})
	if err == nil || !strings.Contains(err.Error(), "injected fault") {
		t.Fatalf("fault: %v", err)
	}
	st, err := ReadState(lab)
	if err != nil {
		t.Fatal(err)
	}
	if st.Spec.Node("sta2") != nil || len(st.Medium.Radios) != 3 || !st.Medium.Radios[2].Gone {
		t.Fatalf("after the rollback: node %v, radios %+v", st.Spec.Node("sta2"), st.Medium.Radios)
	}
	if netnsExists(topo.Namespace(lab, "sta2")) {
		t.Error("sta2's namespace is still there")
	}
	if out, err := exec.Command("ip", "-n", st.Medium.Netns, "link", "show", "r2").CombinedOutput(); err == nil {
		t.Errorf("port r2 is still there:\n%s", out)
	}
	ms, err := LabMediumStats(lab)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ms.Positions["sta2"]; ok {
		t.Error("the medium still has sta2")
	}
	st, err = AddNode(ctx, lab, req, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := st.Medium.Radios[3]; r.Node != "sta2" || r.Port != "r3" || r.Gone {
		t.Errorf("sta2 after the rollback: %+v", r)
	}
	srv, _ := PrimaryAddr(st.Spec.Node("srv"))
	if _, err := Ping(ctx, lab, "sta2", srv, 3*time.Second); err != nil {
		t.Errorf("sta2 → srv: %v", err)
	}
}

func TestWiFiStationChangeCrash(t *testing.T) {
	needRoot(t)
	const lab = "twcc"
	self, _ := os.Executable()
	cmd := exec.Command(self, "-test.run=^TestWiFiStationChangeCrashHelper$")
	cmd.Env = append(os.Environ(), "EMUCTL_TEST_CRASH=change-shaping", "EMUCTL_TEST_CRASH_LAB="+lab)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 9 {
		Down(lab, nil)
		t.Fatalf("crash helper: want exit 9, got %v\n%s", err, out)
	}
	st, err := ReadState(lab)
	if err != nil || st.Medium == nil || len(st.Medium.Radios) != 3 || st.Medium.Radios[2].Node != "sta2" {
		t.Fatalf("state after the crash (the radio joined, recorded): %v %+v", err, st.Medium)
	}
	if err := Down(lab, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Clean(false, nil); err != nil {
		t.Fatal(err)
	}
	requireGone(t, lab)
}

// TestWiFiStationChangeCrashHelper runs as TestWiFiStationChangeCrash's
// subprocess: up, then a station add killed after its Wi-Fi phase.
func TestWiFiStationChangeCrashHelper(t *testing.T) {
	point := os.Getenv("EMUCTL_TEST_CRASH")
	lab := os.Getenv("EMUCTL_TEST_CRASH_LAB")
	if point == "" || lab == "" {
		t.Skip("subprocess helper")
	}
	if _, err := Deploy(context.Background(), loadYAML(t, lab, wifiChangeLab(lab)), Options{}); err != nil {
		t.Fatal(err)
	}
	crashAt = point
	AddNode(context.Background(), lab, topo.NodeRequest{Name: "sta2", Kind: "station", AP: "ap1"}, Options{})
	t.Fatal("not killed at " + point)
}
