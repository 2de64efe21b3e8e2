#!/usr/bin/env bash
# The core demo: a 3-switch linear lab, brought up, used and torn down.
set -euo pipefail
EMUCTL=${1:-emuctl}
cd "$(dirname "$0")/.."
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { say "$*"; "$@"; }
trap '$EMUCTL down demo3 >/dev/null 2>&1 || true' EXIT
run $EMUCTL validate topologies/linear3.yaml
run $EMUCTL up --name demo3 topologies/linear3.yaml
run $EMUCTL ls
run $EMUCTL ls demo3
run $EMUCTL exec h1 -- ping -c3 h3
say "printf 'pingall\\nnet\\nh2 ip -br addr\\nexit\\n' | $EMUCTL cli"
printf 'pingall\nnet\nh2 ip -br addr\nexit\n' | $EMUCTL cli
run $EMUCTL down
run $EMUCTL down        # idempotent
run $EMUCTL clean --check
echo; echo "demo: ok"
