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
// This package must not be imported by non-test code.
package kernellab
