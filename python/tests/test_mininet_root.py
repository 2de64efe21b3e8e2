"""The Mininet layer end to end (root tier): a script under ``emuctl
mininet`` that grows, shapes, cuts and shrinks its network while it runs,
measured against physics. Mininet's own examples are ``make test-mininet``."""

import json
import os
import subprocess
import textwrap

import pytest
from conftest import retry_starved, run_script

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="root tier: needs root (CAP_NET_ADMIN) to build labs")

SCRIPT = textwrap.dedent('''
    import json, re, sys
    from mininet.net import Mininet
    from mininet.link import TCLink
    from mininet.topo import SingleSwitchTopo
    from mininet.nodelib import LinuxBridge
    from mininet.log import setLogLevel
    import mininet
    setLogLevel("output")
    out = {"layer": mininet.__file__}
    # Linux bridges: emuctl cannot yet add links to OVS switches while a lab runs
    net = Mininet(topo=SingleSwitchTopo(2), link=TCLink, switch=LinuxBridge)
    net.start()
    out["lab"] = net.session.name
    out["loss0"] = net.pingAll()
    h1, h2, s1 = net["h1"], net["h2"], net["s1"]
    # a host and a shaped link added while it runs, with Mininet's names
    h3 = net.addHost("h3")
    link = net.addLink(h3, s1, bw=10, delay="5ms")
    out["h3"] = [h3.IP(), link.intf1.name, link.intf2.name]
    m = re.search(r"= ([\\d.]+)/", h1.cmd("ping -c 5 -i 0.2 %s" % h3.IP()))
    out["rtt_h3"] = float(m.group(1))
    out["iperf"] = net.iperf((h3, h1), seconds=4)
    out["verify"] = [r["ok"] for r in net.verify() if r["name"].startswith("h3:")]
    # the link reconfigured in place, then cut and restored
    link.intf1.config(bw=5)
    link.intf2.config(bw=5)
    out["iperf5"] = net.iperf((h3, h1), seconds=4)
    net.configLinkStatus("h3", "s1", "down")
    out["down"] = net.ping([h1, h3], timeout=1)
    net.configLinkStatus("h3", "s1", "up")
    out["up"] = net.ping([h1, h3])
    # the shell keeps state; popen runs in the node
    h1.cmd("cd /tmp; X=42")
    out["shell"] = h1.cmd("pwd; echo $X").split()
    p = h2.popen("hostname")
    out["popen"] = p.communicate()[0].decode().strip()
    # a node stopped with its interfaces is gone: its name can be used again
    from mininet.node import Node
    t = Node("t0")
    t.cmd("true")
    t.stop(deleteIntfs=True)
    t = Node("t0")
    out["again"] = t.cmd("hostname").strip()
    t.stop(deleteIntfs=True)
    net.delLink(link)
    net.delHost(h3)
    out["after"] = [sorted(net.keys()), net.pingAll()]
    net.stop()
    print(json.dumps(out))
''')


def mbps(s):
    v, unit = s.split()[:2]
    return float(v) * {"Kbits/sec": 1e-3, "Mbits/sec": 1, "Gbits/sec": 1e3}[unit]


def test_script_changes_its_network(tmp_path):
    emuctl = os.environ["EMUCTL"]
    # timed (iperf against capacity): judged only on a run that had the CPU
    stdout, out = retry_starved(lambda: run_script(tmp_path, SCRIPT, "grow.py"), "the growing script")
    assert "_compat" in out["layer"]
    assert out["loss0"] == 0
    assert out["h3"] == ["10.0.0.3", "h3-eth0", "s1-eth3"]
    # 5 ms each way on the added link: RTT floor 10 ms (+ serialisation)
    assert 10.0 <= out["rtt_h3"] <= 11.5, out["rtt_h3"]
    cap10, cap5 = 10 * 1448 / 1514, 5 * 1448 / 1514
    server = mbps(out["iperf"][0])
    assert 0.93 * cap10 <= server <= 1.02 * cap10, out["iperf"]
    server5 = mbps(out["iperf5"][0])
    assert 0.93 * cap5 <= server5 <= 1.02 * cap5, out["iperf5"]
    assert out["verify"] == [True, True]  # both directions of the added link, by emuctl verify
    assert out["down"] == 100 and out["up"] == 0
    assert out["shell"] == ["/tmp", "42"]
    assert out["popen"] == "h2"
    assert out["again"] == "t0"
    assert out["after"] == [["c0", "h1", "h2", "s1"], 0]
    assert "the emulation kept up" in stdout or "did NOT keep up" in stdout
    labs = subprocess.run([emuctl, "ls"], stdout=subprocess.PIPE, text=True).stdout
    assert out["lab"] not in labs.split()


def test_mn_command():
    emuctl = os.environ["EMUCTL"]
    r = retry_starved(lambda: subprocess.run(
        [emuctl, "mn", "--topo", "linear,3", "--link", "tc,bw=10,delay=2ms", "--test", "pingall", "--test", "iperf"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120), "mn --test iperf")
    assert r.returncode == 0, r.stdout
    assert "*** Results: 0% dropped (6/6 received)" in r.stdout
    rates = [mbps(x) for x in r.stdout.split("*** Results: [")[-1].split("]")[0].replace("'", "").split(", ")]
    cap = 10 * 1448 / 1514
    assert 0.9 * cap <= rates[0] <= 1.02 * cap, r.stdout  # four shaped hops, each 10 Mbit/s
    assert "completed in" in r.stdout
    r = subprocess.run([emuctl, "mn", "--controller", "nox", "--test", "none"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    assert r.returncode == 1 and "NOX" in r.stdout, r.stdout


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


OVS_SCRIPT = textwrap.dedent('''
    import json, os, sys
    from mininet.net import Mininet
    from mininet.node import Controller, OVSSwitch, RemoteController
    from mininet.topo import LinearTopo
    from mininet.log import setLogLevel
    setLogLevel("output")
    p0, p1 = int(sys.argv[1]), int(sys.argv[2])
    c0 = Controller("c0", port=p0)
    c1 = RemoteController("c1", ip="127.0.0.1", port=p1)   # started by the test
    cmap = {"s1": c0, "s2": c1}
    class Split(OVSSwitch):
        def start(self, controllers):
            return OVSSwitch.start(self, [cmap[self.name]])
    net = Mininet(topo=LinearTopo(2), switch=Split, build=False, waitConnected=5)
    net.addController(c0)
    net.addController(c1)
    net.build()
    net.start()
    s1, s2 = net["s1"], net["s2"]
    out = {"lab": net.session.name, "c0pid": c0.process.pid}
    out["ctl"] = [s1.cmd("ovs-vsctl get-controller s1").strip(), s2.cmd("ovs-vsctl get-controller s2").strip()]
    out["ofport"] = int(s1.cmd("ovs-vsctl get Interface s1-eth2 ofport"))
    out["connected"] = [s1.connected(), s2.connected()]
    out["loss"] = net.pingAll()
    out["flows"] = [s.dpctl("dump-flows").count("idle_timeout=60") for s in (s1, s2)]
    try:
        net.addLink(net.addHost("h9"), s1)
        # a switch added to the running network, secure as Mininet's,
        # under c0, with a host behind it: its flows come from c0
        s9 = net.addSwitch("s9", cls=OVSSwitch)
        h10 = net.addHost("h10")
        net.addLink(s9, s2)
        net.addLink(h10, s9)
        s9.start([c0])
        out["runtime"] = "added"
        out["s9"] = [s9.cmd("ovs-vsctl get-fail-mode s9").strip(), s9.cmd("ovs-vsctl get-controller s9").strip(),
                     net.waitConnected(timeout=10), net.ping([h10, net["h1"]], timeout=2)]
    except Exception as e:
        out["runtime"] = str(e)
    net.stop()
    out["after"] = os.path.exists("/proc/%d" % out["c0pid"])
    # more switches than one ovs-testcontroller serves (16): a second instance
    net = Mininet(topo=LinearTopo(18), controller=lambda name: Controller(name, port=p0))
    net.start()
    c = net.controllers[0]
    out["big"] = [net.waitConnected(timeout=60), len(c.extra),
                  net["s17"].cmd("ovs-vsctl get-controller s17").strip() != "tcp:127.0.0.1:%d" % p0,
                  net.ping([net["h1"], net["h18"]])]
    net.stop()
    print(json.dumps(out))
''')


def test_ovs_switches_and_controllers(tmp_path):
    """OVS switches with the script's names, each under the controller it
    was given: Mininet's (ovs-testcontroller, started and stopped by the
    layer) and a remote one (started here); the controllers install the
    flows that carry the pings. Past 16 switches a second instance."""
    emuctl = os.environ["EMUCTL"]
    import shutil
    if not shutil.which("ovs-testcontroller") or not shutil.which("ovs-vswitchd"):
        pytest.skip("needs openvswitch-switch and openvswitch-testcontroller (scripts/install-deps.sh)")
    p0, p1 = free_port(), free_port()
    rundir = tmp_path / "remote"
    rundir.mkdir()
    remote = subprocess.Popen(["ovs-testcontroller", "-O", "OpenFlow10", "ptcp:%d:127.0.0.1" % p1],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=dict(os.environ, OVS_RUNDIR=str(rundir)))
    try:
        script = tmp_path / "ovs.py"
        script.write_text(OVS_SCRIPT)
        r = subprocess.run([emuctl, "mininet", str(script), str(p0), str(p1)], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=240)
    finally:
        remote.terminate()
        remote.wait()
    assert r.returncode == 0, r.stdout
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["ctl"] == ["tcp:127.0.0.1:%d" % p0, "tcp:127.0.0.1:%d" % p1], out
    assert out["ofport"] == 2
    assert out["connected"] == [True, True]
    assert out["loss"] == 0
    assert all(n > 0 for n in out["flows"]), out  # the controllers' flows, on both switches
    assert out["runtime"] == "added", out  # a host and its link to a running OVS switch
    assert out["s9"] == ["secure", "tcp:127.0.0.1:%d" % p0, True, 0], out
    assert out["after"] is False  # the layer's controller stopped with the network
    assert out["big"] == [True, 1, True, 0], out
    labs = subprocess.run([emuctl, "ls"], stdout=subprocess.PIPE, text=True).stdout
    assert out["lab"] not in labs.split()
    left = subprocess.run(["ip", "-br", "link"], stdout=subprocess.PIPE, text=True).stdout.split()
    assert "s1" not in left and "s1-eth1" not in left


def test_layer_never_shadows_mininet():
    """Outside emuctl mininet, python3 imports what it imported before."""
    r = subprocess.run(["/usr/bin/python3", "-c", "import mininet, sys; print(mininet.__file__)"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        assert "No module named 'mininet'" in r.stdout
    else:
        assert "_compat" not in r.stdout, r.stdout


KILLED_SCRIPT = textwrap.dedent('''
    import os, sys, time
    from mininet.node import Controller
    c0 = Controller("c0", port=int(sys.argv[1]))
    c0.start()
    print("pids", os.getpid(), c0.process.pid, c0.rundir, flush=True)
    time.sleep(60)
''')


def test_controller_dies_with_a_killed_script(tmp_path):
    """A script killed with SIGKILL (as pexpect's close() does 0.1 s after
    its SIGHUP) takes its controller with it: the kernel sends it SIGTERM
    (PR_SET_PDEATHSIG), so its port is free for the next run."""
    import signal
    import socket
    import time
    emuctl = os.environ["EMUCTL"]
    script = tmp_path / "killed.py"
    script.write_text(KILLED_SCRIPT)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([emuctl, "mininet", str(script), str(port)], stdout=subprocess.PIPE, text=True)
    ctl = 0
    try:
        line = p.stdout.readline().split()
        assert line[:1] == ["pids"], line
        script_pid, ctl = int(line[1]), int(line[2])
        os.kill(ctl, 0)  # the controller runs
        os.kill(script_pid, signal.SIGKILL)
        deadline = time.time() + 3
        while time.time() < deadline:
            try:
                os.kill(ctl, 0)
            except ProcessLookupError:
                break
            # reap it if it is ours (it is the script's child, re-parented)
            time.sleep(0.05)
        else:
            pytest.fail(f"the controller (pid {ctl}) outlived its script by 3 s")
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))  # the port is free again
        # what the killed script could not remove, mininet.clean does
        rundir = line[3]
        assert os.path.isdir(rundir), rundir
        clean = tmp_path / "clean.py"
        clean.write_text("from mininet.clean import cleanup\ncleanup()\n")
        subprocess.run([emuctl, "mininet", str(clean)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        assert not os.path.exists(rundir), f"{rundir} after mininet.clean.cleanup()"
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()
        try:
            os.kill(ctl, signal.SIGKILL)  # only if the test failed: the controller we had started
        except (ProcessLookupError, OSError):
            pass
