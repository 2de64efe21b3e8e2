#!/usr/bin/env bash
# The main demo: a 3-switch linear lab brought up, used and torn down, then
# a shaped lab whose links are verified against their configuration.
set -euo pipefail
EMUCTL=${1:-emuctl}
cd "$(dirname "$0")/.."
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { say "$*"; "$@"; }
trap '$EMUCTL down demo3 >/dev/null 2>&1 || true; $EMUCTL down shaped >/dev/null 2>&1 || true' EXIT
run $EMUCTL doctor
run $EMUCTL validate topologies/*.yaml
run $EMUCTL up --name demo3 topologies/linear3.yaml
run $EMUCTL ls
run $EMUCTL ls demo3
run $EMUCTL exec h1 -- ping -c3 h3
say "printf 'pingall\\nnet\\nh2 ip -br addr\\nexit\\n' | $EMUCTL cli"
printf 'pingall\nnet\nh2 ip -br addr\nexit\n' | $EMUCTL cli
run $EMUCTL down
run $EMUCTL down        # idempotent

run $EMUCTL up --topo single,2 --name shaped --link rate=10mbit,delay=5ms,loss=1%,queue=100
run $EMUCTL link show
run $EMUCTL verify
run $EMUCTL exec h1 -- ping -c3 h2
run $EMUCTL down shaped
run $EMUCTL clean --check
echo; echo "demo: ok"
