#!/usr/bin/env bash
# Installs what emuctl's tests and demo need on a Debian/Ubuntu machine.
# Idempotent: skips apt-get when every package is already installed.
set -euo pipefail
PKGS=(iproute2 iputils-ping ethtool iperf3 nftables procps bash tmux openvswitch-switch hostapd wpasupplicant wireless-regdb
  libns3-dev g++ # ns-3 3.37 (Debian bookworm) and a compiler: make validate-wifi
  tshark # reads the Wi-Fi medium's radiotap captures back in tests
  python3 python3-pytest pyflakes3 # the Python package (python/): its tests and lint
  python3-pexpect iperf telnet net-tools iptables vlan # make test-mininet: what Mininet's example tests and examples run
  openvswitch-testcontroller # the Mininet layer's Controller (Mininet's learning controller is this one on Debian)
  chromium # emuctl ui's page tested in a headless browser (ui/browser_test.go, through the DevTools protocol)
  openssh-server) # labs over several machines: emu's SSH test runs sshd -i in stand-in machines (Debian enables
  # its ssh service where systemd runs; the tests do not use it)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # tshark (wireshark-common) asks whether non-root users may capture: no.
  echo 'wireshark-common wireshark-common/install-setuid boolean false' | debconf-set-selections
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
  # Debian starts the test controller as a service where systemd runs
  # (listening on port 6653, where the Mininet layer's Controller c0
  # listens): the one just installed here is stopped and disabled, as
  # Mininet's own installer does.
  if [[ " ${missing[*]} " == *" openvswitch-testcontroller "* ]] && [ -d /run/systemd/system ]; then
    systemctl disable --now openvswitch-testcontroller >/dev/null 2>&1 || true
  fi
fi
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  echo "note: Go is at /usr/local/go/bin; add it to PATH" >&2
fi
