// Package wifi is the seed of emuctl's Wi-Fi emulation. Today it holds only
// the kernel plumbing every Wi-Fi node needs: a minimal client for the
// mac80211_hwsim generic netlink family (create and delete simulated radios
// at run time, optionally MLO-capable) and the nl80211 call that moves a
// radio (wiphy) into a node's network namespace.
//
// Radios only hear each other when they were created from the same network
// namespace (the same hwsim "netgroup"), so create every radio of a lab from
// one namespace and then move each wiphy into its node with SetWiphyNetns.
// DEL_RADIO sees only radios whose wiphy is in the socket's namespace: dial
// the namespace the radio is in to delete it.
//
// The package owns radios it creates and nothing else: it must not delete
// radios by pattern, load kernel modules, start hostapd or wpa_supplicant
// (that will come with the access-point/station layer), or log; it returns
// errors, wrapping ErrNotSupported when the running kernel lacks a feature.
//
// Kernels without mac80211_hwsim (such as emuctl's build/CI kernel) are
// covered by the kernel lab: `make test-kernel` runs this package's tests in
// a VM with Debian's kernel.
package wifi
