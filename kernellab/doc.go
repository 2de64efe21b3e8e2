// Package kernellab connects emuctl's tests to the kernel lab: a throw-away
// QEMU VM that boots Debian's stock kernel (scripts/kernel-lab), for code
// paths that need what the build/CI kernel lacks: sch_netem, the openvswitch
// kernel datapath, mac80211_hwsim.
//
// Tests that need such a feature call Require. Outside the lab a missing
// feature skips the test and names the command that runs it (`make
// test-kernel`); inside the lab (EMUCTL_KERNEL_LAB=1) a missing feature
// fails the test, because there it must exist. Tests that change
// machine-wide state (the kernel's ovs-system datapath, hwsim radios) also
// call RequireLab, so they never run on a developer's machine.
//
// The package's own tests are the lab's smoke tests (TestLab*): netem delay,
// the OVS kernel datapath, two hwsim radios associating through hostapd and
// wpa_supplicant, and MPTCP with two subflows. On any other machine they skip
// at once. Each works in namespaces and processes it creates and removes;
// TestMain checks, inside the lab, that nothing is left behind.
//
// The multi-link tier (wifi_mlo_lab_test.go, `make test-mlo`, Debian's 6.12
// kernel) needs daemons no Debian release ships together — an 802.11be
// hostapd ≥ 2.12 (EMUCTL_HOSTAPD, supplied by the user) and wpa_supplicant ≥
// 2.11 (EMUCTL_WPA_SUPPLICANT) — so its tests skip without them, inside the
// lab too, saying what is missing.
//
// This package must not be imported by non-test code.
package kernellab
