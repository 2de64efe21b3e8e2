package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
)

// oursResult is the part of `emuctl model wifi --json` compared here.
type oursResult struct {
	GoodputMbps    float64         `json:"goodput_mbps"`
	PerStationMbps []float64       `json:"per_station_mbps"`
	CollisionP     *float64        `json:"collision_p"`
	PER            *float64        `json:"per"`
	MPDUsPerPPDU   *float64        `json:"mpdus_per_ppdu"`
	RxDBm          *float64        `json:"rx_dbm"`
	Raw            json.RawMessage `json:"-"`
}

func runOurs(emuctl string, sc scenario) (oursResult, error) {
	args := append([]string{"model", "wifi"}, sc.ours...)
	args = append(args, "--json")
	cmd := exec.Command(emuctl, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return oursResult{}, fmt.Errorf("%s %s: %v: %s", emuctl, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	var r oursResult
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return oursResult{}, fmt.Errorf("%s: emuctl output is not JSON: %v", sc.name, err)
	}
	r.Raw = append(json.RawMessage(nil), bytes.TrimSpace(stdout.Bytes())...)
	return r, nil
}
