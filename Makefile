# emuctl — see README.md. Root-tier targets need sudo.
export PATH := /usr/local/go/bin:$(PATH)
GO      ?= go
BIN     := bin/emuctl
PKGS    := ./...

.PHONY: all build install deps test test-unit test-root fuzz bench demo lint clean-labs kernel-lab-setup test-kernel

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/emuctl

install: build
	install -m 0755 $(BIN) /usr/local/bin/emuctl

deps:
	./scripts/install-deps.sh

# The whole suite: tier 1 (no root) and, as root, tier 2 (namespaces, links)
# and tier 3 (the CLI end to end), then a leak check.
test: deps build
	$(GO) vet $(PKGS)
	test -z "$$(gofmt -l .)" || (gofmt -l . && false)
	$(GO) test -p 1 -count=1 -timeout 40m $(PKGS)
	./$(BIN) clean --check && echo "leak check: clean"

# Tier 1 only: runs anywhere, no root.
test-unit:
	$(GO) test -count=1 ./topo/... ./analysis/... ./capture/...

fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzLoad -fuzztime=60s ./topo/

# Speed figures side by side with peers: lab bring-up vs Mininet, the TCP
# generator vs iperf3, ACK-frequency analysis vs tshark (when installed).
bench: build
	./$(BIN) bench
	$(GO) run ./analysis/cmd/ackbench
	$(GO) test -run '^$$' -bench 'Engine|Pipeline|Segment' -benchtime 2s ./tc/

# The main job: build a lab, reach every host, run commands in nodes, tear down.
demo: deps build
	./scripts/demo.sh ./$(BIN)

# Kernel lab: the tests that need sch_netem, the openvswitch datapath or
# mac80211_hwsim run inside a QEMU VM booting Debian's stock kernel
# (scripts/kernel-lab). Every package whose tests import kernellab joins.
KERNEL_LAB_PKGS ?= $(sort ./kernellab $(patsubst %/,%,$(dir $(shell grep -rl --include='*_test.go' --exclude-dir=bin --exclude-dir=.git '"github.com/emuctl/emuctl/kernellab"' .))))
KERNEL_LAB_TESTFLAGS ?= -test.v -test.count=1 -test.timeout=20m
KERNEL_LAB_BIN := bin/kernel-lab

kernel-lab-setup:
	./scripts/kernel-lab setup

test-kernel: kernel-lab-setup
	rm -rf $(KERNEL_LAB_BIN) && mkdir -p $(KERNEL_LAB_BIN)
	CGO_ENABLED=0 $(GO) test -c -o $(KERNEL_LAB_BIN)/ $(KERNEL_LAB_PKGS)
	./scripts/kernel-lab run --timeout 1800 -- ./scripts/kernel-lab-gotest $(KERNEL_LAB_BIN) $(KERNEL_LAB_PKGS) -- $(KERNEL_LAB_TESTFLAGS)
