"""The client and its mapping, against a real ``emuctl api`` (no root needed)."""

import json

import pytest

from emuctl import BadInput, Client, EmuctlError, NotFound, Problem, Result
from emuctl.lab import _text


@pytest.fixture
def client():
    with Client() as c:
        yield c


def test_methods_match_schema(client):
    schema = client.call("schema")
    assert sorted(schema["methods"]) == client.call("methods")
    for m in ("up", "node.add", "link.add", "shell.cmd", "traffic", "events.subscribe"):
        assert m in schema["methods"], m


def test_errors_carry_code_and_kind(client):
    with pytest.raises(EmuctlError) as e:
        client.call("no.such.method")
    assert e.value.code == -32601 and "no method" in e.value.message
    with pytest.raises(EmuctlError) as e:
        client.call("node.add", nam="x")
    assert e.value.code == -32602 and e.value.kind == "invalid-params"
    with pytest.raises(NotFound):
        client.call("open", lab="no-such-lab-here")


def test_bad_topology_names_line_and_column(client):
    with pytest.raises(BadInput) as e:
        client.call("up", document="name: tpyx\nnodes:\n  h1: {kind: hots}\n")
    (p,) = e.value.problems
    assert (p.line, p.col) == (3, 14) and "did you mean" in p.message and p.path == "nodes.h1.kind"
    assert e.value.code == 1001


def test_concurrent_calls_are_matched_by_id(client):
    import threading
    out = {}

    def call(i):
        out[i] = client.call("methods")

    ts = [threading.Thread(target=call, args=(i,)) for i in range(20)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(out) == 20 and all(v == out[0] for v in out.values())


def test_tclink_numbers_get_mininet_units():
    assert _text("rate", 10) == "10mbit"
    assert _text("delay", 5) == "5ms"
    assert _text("loss", 1.5) == "1.5%"
    assert _text("queue", 100) == "100"
    assert _text("delay", "250us") == "250us"


def test_result_samples_and_problem_text():
    r = Result(json.loads('{"summary":[{"steady_goodput_bps":1}],"flows":[{"id":"f1","samples":'
                          '[{"t_s":0.1,"goodput_bps":5,"tcp":{"srtt_us":100}}]}]}'))
    assert r.summary[0]["steady_goodput_bps"] == 1
    assert r.samples() == [{"flow": "f1", "t_s": 0.1, "goodput_bps": 5, "srtt_us": 100}]
    assert str(Problem(message="bad", file="f.yaml", line=2, col=3, path="nodes.h1")) == "f.yaml:2:3: nodes.h1: bad"
