# emuctl — see README.md. Root-tier targets need sudo.
export PATH := /usr/local/go/bin:$(PATH)
GO      ?= go
BIN     := bin/emuctl
PKGS    := ./...

.PHONY: all build release install deps test test-python test-mininet test-unit test-suites soak fuzz bench demo demo-labs lint kernel-lab-setup test-kernel test-kernel-cluster test-mininet-kernel test-mlo validate-wifi

all: build

# What `emuctl version` reports (internal/buildinfo), passed explicitly:
# Go's own VCS stamp is missing when -buildvcs is off (a GOFLAGS setting).
# Without git, buildinfo falls back to the stamp, then to "dev".
BUILDINFO := github.com/emuctl/emuctl/internal/buildinfo
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS    = -X $(BUILDINFO).Version=$(VERSION) \
	-X $(BUILDINFO).Revision=$(shell git rev-parse HEAD 2>/dev/null) \
	-X $(BUILDINFO).RevisionTime=$(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null) \
	-X $(BUILDINFO).Modified=$(shell git rev-parse HEAD >/dev/null 2>&1 && (git status --porcelain | grep -q . && echo true || echo false))

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/emuctl

# The binary to ship: build's flags and version stamping plus -s -w (no
# symbol table, no DWARF): about a quarter smaller (27.6 MB against 36.9 MB
# on linux/amd64). Panics still name functions and lines; for a debugger,
# use `make build`.
RELEASE_BIN := bin/release/emuctl
release:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $(RELEASE_BIN) ./cmd/emuctl
	@echo "$(RELEASE_BIN): $$(du -k $(RELEASE_BIN) | cut -f1) KiB ($$(stat -c %s $(RELEASE_BIN)) bytes)"

# The Python package (python/emuctl) goes where Debian's python3 looks
# for site packages (/usr/local/lib/python3.X/dist-packages).
PYTHON ?= /usr/bin/python3
install: build
	install -m 0755 $(BIN) /usr/local/bin/emuctl
	dir=$$($(PYTHON) -c 'import site; print(site.getsitepackages()[0])') && \
	  mkdir -p $$dir/emuctl && install -m 0644 python/emuctl/*.py python/emuctl/py.typed $$dir/emuctl/ && \
	  rm -rf $$dir/emuctl/_compat && (cd python && find emuctl/_compat -name '*.py' -exec install -D -m 0644 {} $$dir/{} \;) && \
	  echo "python package emuctl (and its Mininet layer, for emuctl mininet) installed in $$dir"

deps:
	./scripts/install-deps.sh

# The whole suite: tier 1 (no root) and, as root, tier 2 (namespaces, links)
# and tier 3 (the CLI end to end), then a leak check.
test: deps build
	$(GO) vet $(PKGS)
	test -z "$$(gofmt -l .)" || (gofmt -l . && false)
	$(GO) test -p 1 -count=1 -timeout 40m $(PKGS)
	$(MAKE) test-python
	$(MAKE) test-mininet
	./$(BIN) clean --check && echo "leak check: clean"

# The Python package: pyflakes, then its tests with Debian's pytest (the
# root tier builds labs; as another user it skips, saying why).
test-python: build
	pyflakes3 python
	cd python && $(PYTHON) -m pytest -q -p no:cacheprovider tests

# Mininet's own example tests (Debian's mininet 2.3.0, fetched with
# apt-get download and unpacked to a temporary directory) against emuctl's
# Mininet layer; one line per test, then N passed, N failed, N skipped.
# MININET_BUDGET bounds the run (seconds); a known-passing test that fails
# fails the target. TESTS=... runs some (e.g. TESTS="emptynet popen");
# MININET_SLOW=1 also runs the slow ones CI leaves out (treeping64).
MININET_BUDGET ?= 900
test-mininet: build
	MININET_BUDGET=$(MININET_BUDGET) ./scripts/test-mininet $(TESTS)

# Soak: SOAK_CYCLES cycles of up / traffic / down on bridge, shaped,
# routed and OVS labs, most hit by a SIGKILL of up, the supervisor or down
# at a random instant and followed by clean; the host must be exactly as
# before after each. SOAK_SEED replays a run. Prints faults per phase.
SOAK_CYCLES ?= 60
SOAK_SEED ?= 0
soak: build
	EMUCTL_SOAK=$(SOAK_CYCLES) EMUCTL_SOAK_SEED=$(SOAK_SEED) $(GO) test -count=1 -run '^TestSoak$$' -v -timeout 30m ./cmd/emuctl/
	./$(BIN) clean --check && echo "leak check: clean"

# Tier 1 only: every package's tests that build no kernel objects (those
# skip in -short mode, internal/testutil.NeedRoot); runs anywhere, no root.
test-unit:
	$(GO) test -short -count=1 $(PKGS)

# go vet, gofmt, goimports (standard library, then other imports) and
# staticcheck (both pinned; fetched from the Go module proxy).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOIMPORTS ?= golang.org/x/tools/cmd/goimports@v0.39.0
lint:
	$(GO) vet $(PKGS)
	test -z "$$(gofmt -l .)" || (gofmt -l . && false)
	test -z "$$($(GO) run $(GOIMPORTS) -l .)" || ($(GO) run $(GOIMPORTS) -l . && false)
	$(GO) run $(STATICCHECK) $(PKGS)
	# the pure packages build on any OS (the planner, the schema, analysis, units,
	# the expression language, the positioned YAML decoder)
	GOOS=darwin $(GO) vet ./tc ./topo ./analysis ./units ./suite/expr ./internal/yamlpos

fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzLoad -fuzztime=60s ./topo/

# Speed figures side by side with peers: lab bring-up vs Mininet, the TCP
# generator vs iperf3, ACK-frequency analysis vs tshark (when installed),
# the Wi-Fi medium's CPU per frame at an 802.11ac 650 Mbit/s PHY.
bench: build
	./$(BIN) bench
	./$(BIN) bench --scale tree,4,10
	./$(BIN) bench --machines 2 --reps 5
	./$(BIN) bench --change
	./$(BIN) bench --ui
	./$(BIN) bench --mobility
	./$(BIN) bench --mininet-script
	$(GO) run ./analysis/cmd/ackbench
	$(GO) test -run '^$$' -bench 'Engine|Pipeline|Segment' -benchtime 2s ./tc/engine/
	$(GO) test -run '^$$' -bench 'Medium|Ether' -benchtime 2s ./wifi/model/ ./wifi/

# emuctl's 802.11 model (`emuctl model wifi`) against ns-3 3.37: builds
# validate/ns3/wifi-ref.cc into bin/validate/, runs its 96 scenarios on every
# core (about 1 minute on two) and prints ns-3 vs ours as ratios; fails on a ratio
# outside [0.95, 1.05] not in the explained list (validate/ns3/README.md).
# Skips, saying what is missing, without g++ or libns3-dev (make deps).
validate-wifi: build
	$(GO) run ./validate/wifi --emuctl $(BIN)

# The main job: a whole experiment suite, end to end, with its verdict.
demo: deps build
	./$(BIN) test asym-mptcp --quick

# A tour of labs by hand: build a lab, reach every host, run commands in
# nodes, shape and verify links, tear down.
demo-labs: deps build
	./scripts/demo.sh ./$(BIN)

# The quick profile of every built-in suite (~19 min on two cores). Each
# must pass its physics and behaviour checks; a suite that fails or is
# inconclusive runs once more (a busy machine can spoil one run) within
# SUITES_RETRY_BUDGET seconds for second runs together (one happens only
# when the first run's time fits in what is left), and the second run
# decides: pass, fail (a check failed on valid runs), or inconclusive — a
# gating check had no valid run, the machine lacked CPU (fidelity checks):
# not judged, said so, and not counted as a failure. Then every report is
# looked at in a headless chromium (ui's TestSuiteReportsInBrowser:
# sections in order, every plot drawn; the screenshots kept under
# results/ci/screenshots). SUITES_BUDGET (seconds, 0 = none) bounds the
# first runs: CI gives the tier 600 s (.ci/run, within its 60 minutes), so
# it runs the suites whose estimates fit, in an order rotated by the day
# of the year, and names the others with the command that runs them
# (scripts/test-suites).
SUITES ?= sack-reno asym-mptcp cc-mlo tack bufferbloat wifi-physics handover
SUITES_BUDGET ?= 0
SUITES_RETRY_BUDGET ?= 120
test-suites: build
	SUITES_BUDGET=$(SUITES_BUDGET) SUITES_RETRY_BUDGET=$(SUITES_RETRY_BUDGET) GO=$(GO) ./scripts/test-suites ./$(BIN) results/ci $(SUITES)

# Kernel lab: the tests that need sch_netem, the openvswitch datapath or
# mac80211_hwsim run inside a QEMU VM booting Debian's stock kernel
# (scripts/kernel-lab). Every package whose tests import kernellab joins.
# KERNELS: the Debian kernels to run them on, one VM run each: 6.1
# (Debian 12's) and 6.12 (bookworm-backports'), e.g. make test-kernel
# KERNELS="6.1 6.12". In the other packages only the tests of files that
# import kernellab run in the VM: the rest ran on the host (make test).
KERNEL_LAB_PKGS ?= $(sort ./kernellab $(patsubst %/,%,$(dir $(shell grep -rl --include='*_test.go' --exclude-dir=bin --exclude-dir=.git '"github.com/emuctl/emuctl/kernellab"' .))))
KERNEL_LAB_TESTFLAGS ?= -test.v -test.count=1 -test.timeout=20m
KERNEL_LAB_BIN := bin/kernel-lab
KERNELS ?= 6.1

kernel-lab-setup:
	@for k in $(KERNELS); do ./scripts/kernel-lab setup --kernel $$k || exit 1; done

test-kernel: kernel-lab-setup build
	rm -rf $(KERNEL_LAB_BIN) && mkdir -p $(KERNEL_LAB_BIN)
	CGO_ENABLED=0 $(GO) test -c -o $(KERNEL_LAB_BIN)/ $(KERNEL_LAB_PKGS)
	@failed=""; for k in $(KERNELS); do \
	  echo "== kernel lab: Debian $$k"; \
	  ./scripts/kernel-lab run --kernel $$k --timeout 1800 -- ./scripts/kernel-lab-gotest --lab-tests-only $(KERNEL_LAB_BIN) $(KERNEL_LAB_PKGS) -- $(KERNEL_LAB_TESTFLAGS) || failed="$$failed $$k"; \
	done; \
	if [ -n "$$failed" ]; then echo "test-kernel: FAILED on kernel(s):$$failed"; exit 1; fi

# The two-VM tier (kernellab/cluster_lab_test.go): one lab over two
# machines that are two QEMU VMs of the kernel lab, joined by QEMU's socket
# netdev and reached over SSH (scripts/kernel-lab-cluster), ~5 min.
test-kernel-cluster: kernel-lab-setup
	mkdir -p $(KERNEL_LAB_BIN)
	CGO_ENABLED=0 $(GO) test -c -o $(KERNEL_LAB_BIN)/ ./kernellab
	./scripts/kernel-lab-cluster --kernel $(firstword $(KERNELS)) $(KERNEL_LAB_BIN)

# The multi-link tier (kernellab/wifi_mlo_lab_test.go: an AP MLD and a
# station MLD through emuctl, TCP over both links, a link taken down at run
# time, 20 up/down cycles; wifi_mlo_medium_lab_test.go: per-link channel
# timelines on the medium; wifi_mlo_suite_lab_test.go: bin/emuctl test cc-mlo over
# real multi-link) on Debian's 6.12 kernel, ~9 min. It needs an 802.11be
# hostapd ≥ 2.12, which no Debian package provides: give one as
# EMUCTL_HOSTAPD=/path/to/hostapd (built with CONFIG_IEEE80211BE=y;
# CONFIG_TESTING_OPTIONS=y for the link-removal test). wpa_supplicant ≥
# 2.11: EMUCTL_WPA_SUPPLICANT, by default Debian sid's, which
# scripts/kernel-lab setup unpacks. Without the hostapd it skips, saying so
# (CI does).
MLO_KERNEL ?= 6.12
MLO_BIN := bin/kernel-lab-mlo
# Mininet's example tests that need kernel features this machine may lack
# (vlanhost: 802.1Q), inside the kernel lab's VM with 8021q and the
# openvswitch module loaded; the package is downloaded on the host first
# (the VM has no archive). MININET_KERNEL_TESTS names them. Then the
# Mininet-WiFi layer's scripts that need mac80211_hwsim (adhoc.py and
# mesh.py: the kernel's IBSS and 802.11s mesh), in a VM of their own.
MININET_KERNEL_TESTS ?= test_vlanhost
MN_WIFI_KERNEL_TESTS ?= adhoc or mesh
test-mininet-kernel: kernel-lab-setup build
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	(cd "$$d" && apt-get download mininet >/dev/null 2>&1) && deb=$$(ls "$$d"/mininet_*.deb) || \
	  { echo "test-mininet-kernel: apt-get download mininet failed"; exit 1; }; \
	./scripts/kernel-lab run --kernel $(firstword $(KERNELS)) --timeout 900 --module 8021q --module openvswitch -- \
	  env EMUCTL=$(CURDIR)/$(BIN) MININET_DEB="$$deb" MININET_PASSING="$(MININET_KERNEL_TESTS)" \
	  ./scripts/test-mininet $(MININET_KERNEL_TESTS)
	./scripts/kernel-lab run --kernel $(firstword $(KERNELS)) --timeout 600 -- \
	  env EMUCTL=$(CURDIR)/$(BIN) PATH=$(CURDIR)/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	  sh -c 'cd python && python3 -m pytest -v -p no:cacheprovider tests/test_mn_wifi_root.py -k "$(MN_WIFI_KERNEL_TESTS)"'

test-mlo: build
	@if [ -z "$$EMUCTL_HOSTAPD" ]; then \
	  echo "test-mlo: SKIPPED: the multi-link tier needs an 802.11be hostapd, and none was given: set EMUCTL_HOSTAPD=/path/to/hostapd (hostapd >= 2.12 built with CONFIG_IEEE80211BE=y; no Debian package has one; see README, Wi-Fi 7 multi-link)"; \
	  exit 0; \
	fi; \
	./scripts/kernel-lab setup --kernel $(MLO_KERNEL) || exit 1; \
	wpa="$${EMUCTL_WPA_SUPPLICANT:-$$(./scripts/kernel-lab userland)}"; \
	if [ -z "$$wpa" ]; then echo "test-mlo: no wpa_supplicant >= 2.11: set EMUCTL_WPA_SUPPLICANT, or let scripts/kernel-lab setup unpack Debian sid's"; exit 1; fi; \
	rm -rf $(MLO_BIN) && mkdir -p $(MLO_BIN) && \
	CGO_ENABLED=0 $(GO) test -c -o $(MLO_BIN)/ ./kernellab && \
	./scripts/kernel-lab run --kernel $(MLO_KERNEL) --timeout 1800 --env "EMUCTL_HOSTAPD=$$EMUCTL_HOSTAPD" --env "EMUCTL_WPA_SUPPLICANT=$$wpa" -- \
	  ./scripts/kernel-lab-gotest $(MLO_BIN) ./kernellab -- -test.v -test.count=1 -test.timeout=20m -test.run 'MLO'
