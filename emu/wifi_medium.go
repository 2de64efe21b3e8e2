package emu

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"time"

	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"github.com/emuctl/emuctl/wifi/model"
	"github.com/vishvananda/netns"
)

// permAddr is a radio's permanent address: locally administered, unicast,
// from the lab, its deploy and the node's index — unique host-wide in
// practice (the kernel refuses a duplicate, and up then fails naming it).
func permAddr(lab, deploy string, i int) [6]byte {
	h := sha256.Sum256([]byte(lab + "\x00" + deploy))
	return [6]byte{0x42, h[0], h[1], h[2], byte(i >> 8), byte(i)}
}

// mediumRadios lists the lab's radios for the medium, in wnodes order.
func (d *deployer) mediumRadios(wnodes []*node) []wifi.MediumRadio {
	tag := deployTag(d.st.Created)
	var out []wifi.MediumRadio
	for i, n := range wnodes {
		r := wifi.SpecRadio(n.spec)
		r.Perm = permAddr(d.spec.Name, tag, i)
		var iface string
		var rate string
		var mode string
		var ch topo.WiFiChannel
		var links []topo.WiFiChannel // a multi-link radio's
		short := false               // an 802.11b BSS's short preamble
		if ap := n.spec.AP; ap != nil {
			iface, rate, mode, ch, short = ap.Iface, ap.Rate, ap.Mode, ap.Channel, ap.ShortPreamble
			if ap.MLO() {
				links = ap.Links
			}
		} else if st := n.spec.Station; st != nil {
			iface, rate = st.Iface, st.Rate
			if a := d.spec.Adhoc(st.Adhoc); a != nil {
				mode, ch, short = a.Mode, a.Channel, a.ShortPreamble
			} else if apn := d.spec.Node(st.AP); apn != nil && apn.AP != nil {
				mode, ch, short = apn.AP.Mode, apn.AP.Channel, apn.AP.ShortPreamble
				if apn.AP.MLO() && st.MLO {
					links = apn.AP.Links
				}
			}
		}
		if ifc := findIface(n.spec, iface); ifc != nil {
			if mac := parseMAC(ifc.MAC); len(mac) == 6 {
				r.Addrs = append(r.Addrs, [6]byte(mac))
			}
		}
		if rate != "" && links == nil {
			if x, err := topo.MediumRate(mode, ch, rate); err == nil {
				x.ShortPreamble = short && x.Class == model.DSSS && x.Kbps != 1000
				r.Fixed = &x
			}
		}
		if mode != "" && links == nil {
			// the BSS's mode and channel: its channel's timing on the
			// medium (legacy modes have no QoS) and its AP's range
			r.Mode, r.FreqMHz, r.WidthMHz, r.QoS = mode, ch.FreqMHz, ch.Width, !topo.LegacyMode(mode)
		}
		if links != nil {
			r.MLO, r.Mode = true, mode
			for _, l := range links {
				ml := wifi.MediumLink{FreqMHz: l.FreqMHz, WidthMHz: l.Width}
				if rate != "" {
					if x, err := topo.MediumRate(mode, l, rate); err == nil {
						ml.Fixed = &x
					}
				}
				r.Links = append(r.Links, ml)
			}
		}
		out = append(out, r)
	}
	// an AP's radio has no AP (the engine's convention; RangeM), a
	// station's is its AP's; an ad hoc member has none either, and the
	// number of its network
	for i, n := range wnodes {
		out[i].AP = -1
		if st := n.spec.Station; st != nil && st.Adhoc != "" {
			out[i].Adhoc = adhocNumber(d.spec, st.Adhoc)
		} else if st != nil {
			for j, m := range wnodes {
				if m.spec.Name == st.AP {
					out[i].AP = j
				}
			}
		}
	}
	// a station of a network of several APs: their radios (it roams)
	for i, n := range wnodes {
		if st := n.spec.Station; st != nil && len(st.ESS) > 1 {
			for _, name := range st.ESS {
				for j, m := range wnodes {
					if m.spec.Name == name {
						out[i].ESS = append(out[i].ESS, j)
					}
				}
			}
		}
	}
	return out
}

// startMediumForLab records the medium and has the supervisor serve it
// before any radio exists (hwsim announces interface addresses only to a
// registered medium, and a radio created without one would start on the
// instant medium).
func (d *deployer) startMediumForLab(ctx context.Context, netnsName string, wnodes []*node) error {
	m := d.spec.WiFiMedium
	if m == nil || !m.Enabled {
		return nil
	}
	radios := d.mediumRadios(wnodes)
	d.stMu.Lock()
	d.st.Medium = &MediumState{Backend: WiFiHwsim, Netns: netnsName, Radios: radios, Spec: *m}
	d.stMu.Unlock()
	return d.serveMedium(ctx)
}

// serveMedium saves the recorded medium and has the lab's supervisor
// serve it: a new supervisor serves it as it starts; a running one (the
// lab's link engines) is told.
func (d *deployer) serveMedium(ctx context.Context) error {
	if err := d.save(); err != nil {
		return err
	}
	started, err := d.ensureSupervisor(ctx)
	if err != nil {
		return fmt.Errorf("wifi medium: %w", err)
	}
	if started {
		return nil // the supervisor serves the recorded medium as it starts
	}
	resp, err := supervisorCall(d.spec.Name, ctlRequest{Op: "medium"})
	if err != nil {
		return fmt.Errorf("wifi medium: %w", err)
	}
	if resp.Error != "" {
		return fmt.Errorf("wifi medium: %s", resp.Error)
	}
	return nil
}

// mediumConfig turns the recorded medium into the server's configuration.
func mediumConfig(ms *MediumState) wifi.MediumConfig {
	c := wifi.MediumSettings(ms.Spec)
	c.Radios = ms.Radios
	return c
}

// serveMedium registers the lab's medium in its namespace and runs it
// until ctx ends; the error of a medium that dies is the supervisor's
// (the radios would fall back to hwsim's instant delivery unnoticed).
func serveMedium(ctx context.Context, ms *MediumState, started chan<- error) (*wifi.MediumServer, <-chan error) {
	done := make(chan error, 1)
	h, err := netns.GetFromPath(filepath.Join(NetnsDir, ms.Netns))
	if err != nil {
		started <- err
		return nil, done
	}
	hw, err := wifi.DialHwsim(int(h))
	h.Close()
	if err != nil {
		started <- err
		return nil, done
	}
	sock, err := hw.RegisterMedium()
	if err != nil {
		hw.Close()
		started <- err
		return nil, done
	}
	srv, err := wifi.NewMediumServer(sock, mediumConfig(ms))
	if err != nil {
		sock.Close()
		started <- err
		return nil, done
	}
	started <- nil
	runMedium(ctx, srv, sock.Close, done)
	return srv, done
}

// runMedium runs a medium until ctx ends, then closes what it was served
// on; done gets its error (a medium that stops on its own while the lab
// runs is an error too).
func runMedium(ctx context.Context, srv interface{ Run(context.Context) error }, closeFn func() error, done chan<- error) {
	go func() {
		t0 := time.Now()
		err := srv.Run(ctx)
		if closeFn != nil {
			closeFn()
		}
		if err == nil && ctx.Err() == nil {
			err = fmt.Errorf("stopped after %v", time.Since(t0).Round(time.Millisecond))
		}
		done <- err
	}()
}

// LabMediumStats asks a running lab's supervisor for its medium's
// counters.
func LabMediumStats(lab string) (*wifi.MediumStats, error) {
	resp, err := supervisorCall(lab, ctlRequest{Op: "medium-stats"})
	if err != nil {
		return nil, err
	}
	return resp.Medium, nil
}

// SetMediumPosition moves a Wi-Fi node of a running lab to pos (metres):
// its frames and the frames it receives see the new path loss from now
// on (a station moved out of range stops hearing its AP).
func SetMediumPosition(lab, node string, pos [3]float64) error {
	_, err := supervisorCall(lab, ctlRequest{Op: "medium-move", Node: node, Pos: &pos})
	return err
}

// SetMediumPair fixes the SNR between two Wi-Fi nodes of a running lab
// (snr), adds loss to their path (loss), or with neither removes the
// pair's override.
func SetMediumPair(lab, a, b string, snr, loss *float64) error {
	_, err := supervisorCall(lab, ctlRequest{Op: "medium-pair", A: a, B: b, SNR: snr, Loss: loss})
	return err
}

// CaptureMedium writes every PPDU on a running lab's medium to w as pcapng
// with radiotap headers (a monitor-mode capture of the lab's channels)
// until ctx ends; the capture is complete when it returns.
func CaptureMedium(ctx context.Context, lab string, w io.Writer, snaplen int) error {
	c, err := net.DialTimeout("unix", supervisorSock(lab), 2*time.Second)
	if err != nil {
		return fmt.Errorf("lab %s: supervisor not reachable: %w", lab, err)
	}
	defer c.Close()
	if err := json.NewEncoder(c).Encode(ctlRequest{Op: "medium-capture", Snaplen: snaplen}); err != nil {
		return err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("lab %s: medium capture: %w", lab, err)
	}
	var resp ctlResponse
	if err := json.Unmarshal(line, &resp); err != nil {
		return fmt.Errorf("lab %s: medium capture: %w", lab, err)
	}
	if resp.Error != "" {
		return fmt.Errorf("lab %s: %s", lab, resp.Error)
	}
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			// half-close: the supervisor stops, flushes and closes
			c.(*net.UnixConn).CloseWrite()
		case <-stopped:
		}
	}()
	_, err = io.Copy(w, r)
	close(stopped)
	return err
}

// adhocNumber is ad hoc network name's number on the medium (1, 2, ...:
// its place in the file; 0: none).
func adhocNumber(spec *topo.Spec, name string) int {
	for k, a := range spec.WiFiAdhoc {
		if a.Name == name {
			return k + 1
		}
	}
	return 0
}
