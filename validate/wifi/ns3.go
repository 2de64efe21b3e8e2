package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ns3Header is what libns3-dev (Debian's ns-3 3.37) installs; the program
// includes it through the module headers.
const ns3Header = "/usr/include/ns3/wifi-module.h"

// ns3Libs are linked explicitly: the ns3-*.pc files of Debian's 3.37 carry
// a broken Cflags ("-I/usr;"), and --no-as-needed keeps every library, so
// each one registers its TypeIds (else "Unknown type" at run time).
var ns3Libs = []string{"ns3-wifi", "ns3-internet", "ns3-applications", "ns3-mobility",
	"ns3-propagation", "ns3-traffic-control", "ns3-network", "ns3-core"}

// errMissing reports what the machine lacks to build the reference.
var errMissing = errors.New("ns-3 reference cannot be built")

// probeNS3 returns errMissing, wrapped with each missing piece and how to
// install it, or nil.
func probeNS3() error {
	var missing []string
	if _, err := exec.LookPath("g++"); err != nil {
		missing = append(missing, "g++ (not on PATH; apt-get install g++)")
	}
	if _, err := os.Stat(ns3Header); err != nil {
		missing = append(missing, "libns3-dev ("+ns3Header+" not found; apt-get install libns3-dev, ns-3 3.37 on Debian bookworm)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing %s (or run scripts/install-deps.sh)", errMissing, strings.Join(missing, " and "))
	}
	return nil
}

// buildNS3 compiles src into dir/wifi-ref unless the binary is newer; built
// says whether it compiled.
func buildNS3(src, dir string) (bin string, built bool, err error) {
	bin = filepath.Join(dir, "wifi-ref")
	si, err := os.Stat(src)
	if err != nil {
		return "", false, err
	}
	if bi, err := os.Stat(bin); err == nil && bi.ModTime().After(si.ModTime()) {
		return bin, false, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, err
	}
	args := []string{"-O2", "-std=c++17", "-Wall", "-o", bin, src, "-Wl,--no-as-needed"}
	for _, l := range ns3Libs {
		args = append(args, "-l"+l)
	}
	cmd := exec.Command("g++", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", false, fmt.Errorf("g++ %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return bin, true, nil
}

// ns3Result is the JSON line wifi-ref prints (the fields compared here;
// Raw keeps all of it).
type ns3Result struct {
	GoodputMbps    float64          `json:"goodput_mbps"`
	PerStationMbps []float64        `json:"per_station_mbps"`
	CollisionP     *float64         `json:"collision_p"`
	MPDUPer        *float64         `json:"mpdu_per"`
	MPDUsPerPPDU   *float64         `json:"mpdus_per_ppdu"`
	RxSignalDBm    *float64         `json:"rx_signal_dbm"`
	Frames         map[string]frame `json:"frames"`
	NS3            map[string]any   `json:"ns3"`
	Raw            json.RawMessage  `json:"-"`
}

type frame struct {
	Count  int     `json:"count"`
	MeanUs float64 `json:"mean_us"`
	Bytes  float64 `json:"mean_bytes"`
	MPDUs  float64 `json:"mean_mpdus"`
	Mode   string  `json:"mode"`
}

func runNS3(bin string, sc scenario) (ns3Result, error) {
	args := append([]string{"--scenario=" + sc.name}, sc.ns3...)
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return ns3Result{}, fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	line := bytes.TrimSpace(stdout.Bytes())
	var r ns3Result
	if err := json.Unmarshal(line, &r); err != nil {
		return ns3Result{}, fmt.Errorf("%s: output is not one JSON line: %v: %q", sc.name, err, line)
	}
	r.Raw = append(json.RawMessage(nil), line...)
	return r, nil
}
