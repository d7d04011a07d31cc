"""``cabench serve`` against hostile requests and options: every malformed request gets a 4xx JSON error in the
OpenAI style and the server goes on serving, on the same connection when the request could be delimited and
on a new one otherwise; every numeric option is range-checked in one line with exit 2."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest

from cabench.errors import CabenchError
from cabench.live.serve import ReplayEndpoint, serve_in_thread
from cabench.live.tasks import replay_answer
from tests.conftest import DATA, SAFETY_S, spread_logs, write_dataset
from tests.test_torture import cli, one_line_error

GOOD = {"model": "model00", "temperature": 0.5, "max_tokens": 128,
        "messages": [{"role": "system", "content": "cabench replay; prompting: direct"},
                     {"role": "user", "content": "cabench replay instance: q000"}]}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("data") / "two", spread_logs(2, 5, seed=3))


def start(dataset, **options) -> Iterator[int]:
    """Serve ``dataset`` on an ephemeral loopback port in a thread; yield the port, then shut down."""
    endpoint = ReplayEndpoint.load(dataset, **options)
    server, thread = serve_in_thread(endpoint, "127.0.0.1", 0)
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join(SAFETY_S)


@pytest.fixture(scope="module")
def port(dataset):
    yield from start(dataset)


class Connection:
    """A raw HTTP/1.1 connection to the server, reading one response at a time."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=SAFETY_S)
        self.buffer = b""

    def send(self, raw: bytes) -> None:
        self.sock.sendall(raw)

    def _more(self) -> bytes:
        chunk = self.sock.recv(65536)
        self.buffer += chunk
        return chunk

    def response(self) -> tuple[int, dict[str, str], dict]:
        """(status, headers with lower-case names, JSON body) of the next response."""
        while b"\r\n\r\n" not in self.buffer:
            assert self._more(), f"connection closed before a response: {self.buffer!r}"
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {name.strip().lower(): value.strip() for name, value in (line.split(":", 1) for line in lines)}
        length = int(headers["content-length"])
        while len(self.buffer) < length:
            assert self._more(), "connection closed in the middle of a body"
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return int(status_line.split()[1]), headers, json.loads(body)

    def closed_by_server(self) -> bool:
        return not self.buffer and self._more() == b""

    def close(self) -> None:
        self.sock.close()


def post(body: bytes, path: str = "/v1/chat/completions", headers: str | None = None) -> bytes:
    """A POST with ``headers`` (default: the body's Content-Length)."""
    if headers is None:
        headers = f"Content-Length: {len(body)}\r\n"
    return f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}\r\n".encode("latin-1") + body


def good_request() -> bytes:
    return post(json.dumps(GOOD).encode())


def assert_good(conn: Connection) -> None:
    conn.send(good_request())
    status, _, body = conn.response()
    assert status == 200, body
    reply = body["choices"][0]["message"]["content"]
    assert reply in (replay_answer("q000", True), replay_answer("q000", False))
    assert body["usage"]["completion_tokens"] > 0


def assert_error(status: int, body: dict, expected: int, words: str) -> None:
    assert status == expected, body
    assert set(body) == {"error"} and body["error"]["type"] == "invalid_request_error", body
    assert words in body["error"]["message"], body["error"]["message"]


def with_fields(**fields) -> bytes:
    return json.dumps({**GOOD, **fields}).encode()


def raw_fields(**fields: str) -> bytes:
    """The good request with fields replaced by raw JSON text (numbers json.dumps would not write)."""
    text = json.dumps(GOOD)
    for name, raw in fields.items():
        text = text.replace(f'"{name}": {json.dumps(GOOD[name])}', f'"{name}": {raw}')
    return text.encode()


def nested(depth: int) -> bytes:
    return b'{"model": ' + b"[" * depth + b"]" * depth + b"}"


BODIES = {
    "not UTF-8": (post(b'{"model": "\xff\xfe"}'), 400, "not UTF-8"),
    "UTF-8 BOM": (post(b"\xef\xbb\xbf" + json.dumps(GOOD).encode()), 400, "not JSON"),
    "100,000 deep": (post(nested(100_000)), 400, "nested too deeply"),
    "not JSON": (post(b"hello"), 400, "not JSON"),
    "empty body": (post(b""), 400, "not JSON"),
    "JSON array body": (post(b"[]"), 400, "not an array"),
    "JSON null body": (post(b"null"), 400, "not null"),
    "JSON number body": (post(b"5"), 400, "not the number 5"),
    "max_tokens 1e400": (post(raw_fields(max_tokens="1e400")), 400, "max_tokens"),
    "max_tokens NaN": (post(raw_fields(max_tokens="NaN")), 400, "NaN is not a JSON number"),
    "max_tokens -Infinity": (post(raw_fields(max_tokens="-Infinity")), 400, "not a JSON number"),
    "max_tokens 5000 digits": (post(raw_fields(max_tokens="9" * 5000)), 400, "not JSON"),
    "max_tokens text": (post(with_fields(max_tokens="128")), 400, "max_tokens"),
    "max_tokens negative": (post(with_fields(max_tokens=-1)), 400, "max_tokens"),
    "max_tokens fraction": (post(with_fields(max_tokens=1.5)), 400, "max_tokens"),
    "max_tokens true": (post(with_fields(max_tokens=True)), 400, "max_tokens"),
    "max_tokens list": (post(with_fields(max_tokens=[128])), 400, "not an array"),
    "max_completion_tokens inf": (post(raw_fields(max_tokens='null, "max_completion_tokens": 1e400')), 400,
                                  "max_completion_tokens"),
    "max_tokens 10**400": (post(raw_fields(max_tokens="1" + "0" * 400)), 404, "no logged configuration"),
    "temperature 1e400": (post(raw_fields(temperature="1e400")), 400, "temperature"),
    "temperature 10**400": (post(raw_fields(temperature="1" + "0" * 400)), 400, "temperature"),
    "temperature Infinity": (post(raw_fields(temperature="Infinity")), 400, "not a JSON number"),
    "temperature text": (post(with_fields(temperature="hot")), 400, "temperature"),
    "temperature object": (post(with_fields(temperature={})), 400, "not an object"),
    "model number": (post(with_fields(model=5)), 400, "model"),
    "model null": (post(with_fields(model=None)), 400, "model"),
    "messages text": (post(with_fields(messages="hi")), 400, "messages"),
    "messages object": (post(with_fields(messages={"role": "user"})), 400, "messages"),
    "messages empty": (post(with_fields(messages=[])), 400, "messages"),
    "messages of numbers": (post(with_fields(messages=[1, "x", None])), 400, "not a cabench replay prompt"),
    "unknown model": (post(with_fields(model="nobody")), 404, "no logged configuration"),
    "unknown instance": (post(with_fields(messages=[GOOD["messages"][0], {"content": "cabench replay instance: "
                                                                                     + "z" * 5000}])), 404,
                         "is not in the log"),
    "unknown POST route": (post(b"{}", path="/v1/nowhere"), 404, "no route"),
    "unknown GET route": (b"GET /v1/nowhere HTTP/1.1\r\nHost: x\r\n\r\n", 404, "no route"),
    "GET with a body": (b"GET /v1/nowhere HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 404, "no route"),
    "no Content-Length": (post(b"", headers=""), 411, "Content-Length"),
}


@pytest.mark.parametrize("label", list(BODIES))
def test_bad_request_then_good_on_the_same_connection(port, label):
    """A request that can be delimited but not answered: a 4xx JSON error, and the connection serves on."""
    request, expected, words = BODIES[label]
    conn = Connection(port)
    try:
        conn.send(request)
        status, headers, body = conn.response()
        assert_error(status, body, expected, words)
        assert len(body["error"]["message"]) < 200
        assert headers.get("connection") != "close"
        assert_good(conn)
    finally:
        conn.close()


UNFRAMED = {
    "Content-Length abc": (post(b"{}", headers="Content-Length: abc\r\n"), 400, "not a number of bytes"),
    "Content-Length -1": (post(b"{}", headers="Content-Length: -1\r\n"), 400, "not a number of bytes"),
    "Content-Length 1e3": (post(b"{}", headers="Content-Length: 1e3\r\n"), 400, "not a number of bytes"),
    "Content-Length 5_0": (post(b"{}", headers="Content-Length: 5_0\r\n"), 400, "not a number of bytes"),
    "Content-Length superscript": (post(b"{}", headers="Content-Length: \xb2\r\n"), 400, "not a number of bytes"),
    "Content-Length 10^12": (post(b"", headers=f"Content-Length: {10**12}\r\n"), 413, "at most"),
    "Content-Length 4400 digits": (post(b"", headers=f"Content-Length: {'9' * 4400}\r\n"), 413, "at most"),
    "two Content-Lengths": (post(b"{}", headers="Content-Length: 2\r\nContent-Length: 3\r\n"), 400, "conflicting"),
    "chunked": (post(b"2\r\n{}\r\n0\r\n\r\n", headers="Transfer-Encoding: chunked\r\n"), 411, "Content-Length"),
    "garbage request line": (b"HELLO\r\n\r\n", 400, "Bad request syntax"),
    "bad HTTP version": (b"GET /v1/models HTTP/x.y\r\n\r\n", 400, "Bad request version"),
    "request line of 70,000": (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", 414, "URI Too Long"),
    "header of 70,000": (b"GET /v1/models HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", 431, "Line too long"),
    "unknown method": (b"PUT /v1/chat/completions HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}", 405, "not served"),
}


def assert_closed_then_served(port: int, conn: Connection, headers: dict[str, str]) -> None:
    assert headers.get("connection") == "close"
    assert conn.closed_by_server()
    fresh = Connection(port)
    try:
        assert_good(fresh)
    finally:
        fresh.close()


@pytest.mark.parametrize("label", list(UNFRAMED))
def test_undelimited_request_is_answered_and_closed_then_a_new_connection_served(port, label):
    """A request whose end cannot be found: a 4xx JSON error, ``Connection: close``, and new connections work."""
    request, expected, words = UNFRAMED[label]
    conn = Connection(port)
    try:
        conn.send(request)
        status, headers, body = conn.response()
        assert_error(status, body, expected, words)
        assert_closed_then_served(port, conn, headers)
    finally:
        conn.close()


def test_body_shorter_than_its_content_length(port):
    """The client stops sending half-way through the body: 400 naming what arrived, and serving goes on."""
    conn = Connection(port)
    try:
        conn.send(post(b"{}", headers="Content-Length: 100\r\n"))
        conn.sock.shutdown(socket.SHUT_WR)
        status, headers, body = conn.response()
        assert_error(status, body, 400, "ended after 2 of 100 bytes")
        assert_closed_then_served(port, conn, headers)
    finally:
        conn.close()


def test_stalled_body_is_answered_408(dataset):
    """A client that announces a body and never sends it does not hold its thread forever."""
    for port in start(dataset, read_timeout_s=0.2):
        conn = Connection(port)
        try:
            conn.send(post(b"{}", headers="Content-Length: 100\r\n"))
            status, headers, body = conn.response()
            assert_error(status, body, 408, "did not arrive")
            assert headers.get("connection") == "close"
        finally:
            conn.close()


def test_models_and_keep_alive_after_many_errors(port):
    """Errors of every kind on one connection leave it serving the models list and completions."""
    conn = Connection(port)
    try:
        for label in ("not UTF-8", "100,000 deep", "max_tokens 1e400", "no Content-Length"):
            conn.send(BODIES[label][0])
            assert conn.response()[0] == BODIES[label][1]
        conn.send(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
        status, _, body = conn.response()
        assert status == 200 and [m["id"] for m in body["data"]] == ["model00", "model01"]
        assert_good(conn)
    finally:
        conn.close()


OPTIONS = {
    "latency-scale inf": (["--latency-scale", "inf"], "--latency-scale inf"),
    "latency-scale nan": (["--latency-scale", "nan"], "--latency-scale nan"),
    "latency-scale negative": (["--latency-scale", "-1"], "--latency-scale -1"),
    "latency-scale huge": (["--latency-scale", "1e300"], "--latency-scale 1e+300"),
    "hold-s negative": (["--hold-s", "-1"], "--hold-s -1"),
    "hold-s inf": (["--hold-s", "inf"], "--hold-s inf"),
    "hold-s nan": (["--hold-s", "nan"], "--hold-s nan"),
    "hold-s beyond sleep": (["--hold-s", "1e10"], "--hold-s 10000000000.0"),
    "port 70000": (["--port", "70000"], "--port 70000"),
    "port -1": (["--port", "-1"], "--port -1"),
    "seed negative": (["--seed", "-1"], "--seed -1"),
    "seed 2**64": (["--seed", str(2**64)], f"--seed {2**64}"),
    "fail-rate nan": (["--fail-rate", "429=nan"], "--fail-rate 429=nan"),
    "fail-rate inf": (["--fail-rate", "timeout=inf"], "--fail-rate timeout=inf"),
    "fail-rate negative": (["--fail-rate", "500=-0.1"], "--fail-rate 500=-0.1"),
    "fail-rate kind twice": (["--fail-rate", "429=0.9,429=0.05,500=0.5"], "--fail-rate 429=0.05: 429 is given twice"),
    "host not an address": (["--host", "256.0.0.1"], "256.0.0.1:0: cannot listen"),
    "host with NUL": (["--host", "a\x00b"], "cannot listen"),
}


def refuse_to_serve(server) -> None:
    raise AssertionError(f"serving at {server.server_address} despite a bad option")


@pytest.mark.parametrize("label", list(OPTIONS))
def test_out_of_range_option_is_one_line(dataset, label, monkeypatch):
    """An option out of range is refused in one line naming it, with exit 2, before anything listens."""
    monkeypatch.setattr(ThreadingHTTPServer, "serve_forever", refuse_to_serve)  # a regression fails, not hangs
    args, words = OPTIONS[label]
    one_line_error(cli("serve", dataset, "--port", 0, *args), words)


def test_head_is_answered_with_headers_only(port):
    """HEAD (not served) gets its 405 status and headers without a body, and the server keeps serving."""
    conn = Connection(port)
    try:
        conn.send(b"HEAD /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            head += conn.sock.recv(65536)
        status_line, _, rest = head.partition(b"\r\n")
        assert status_line.split()[1] == b"405" and rest.split(b"\r\n\r\n", 1)[1] == b""
        assert conn.closed_by_server()  # nothing follows the headers; the connection ends
    finally:
        conn.close()
    fresh = Connection(port)
    try:
        assert_good(fresh)
    finally:
        fresh.close()


def test_replies_leave_without_nagles_delay(dataset, monkeypatch):
    """Each accepted connection has TCP_NODELAY: with Nagle's algorithm a reply's body, written after its
    headers, waited for the client's delayed acknowledgement of them (about 40 ms a reply)."""
    accepted: list[socket.socket] = []
    get_request = ThreadingHTTPServer.get_request

    def recorded(self):
        connection, address = get_request(self)
        accepted.append(connection)
        return connection, address

    monkeypatch.setattr(ThreadingHTTPServer, "get_request", recorded)
    for port in start(dataset):
        conn = Connection(port)
        assert_good(conn)  # the connection is kept open (HTTP/1.1), its handler set up
        assert len(accepted) == 1 and accepted[0].getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        conn.close()


def test_content_given_as_parts_is_read_as_its_text_and_an_empty_message_list_said_to_be_empty(dataset):
    """OpenAI's ``content: [{"type": "text", "text": ...}]`` was read as its Python text (instance "q000'}]" not in
    the log), and ``messages: []`` was refused as "expected a list of chat messages, not an array"."""
    from cabench.live.serve import Refused

    endpoint = ReplayEndpoint.load(dataset)
    plain, _ = endpoint.complete(GOOD)
    parts = {**GOOD, "messages": [{"role": m["role"], "content": [{"type": "text", "text": m["content"]}]}
                                  for m in GOOD["messages"]]}
    answered, _ = endpoint.complete(parts)
    assert answered["choices"] == plain["choices"] and answered["usage"] == plain["usage"]
    with pytest.raises(Refused) as refused:
        endpoint.complete({**GOOD, "messages": []})
    assert refused.value.status == 400
    assert str(refused.value) == "messages: the list is empty; give at least one chat message"


def test_a_prompting_with_spaces_is_served_and_twin_configurations_are_refused(tmp_path):
    """A prompting named 'few shot' (the loader takes it) was read as 'few' and every request got 404; two
    configurations with the same model, temperature, generation limit and prompting were served as one, the later
    answering for both, so collect wrote one's latencies and tokens under the other's name."""
    from cabench.errors import CabenchError

    logs = spread_logs(2, 5, seed=3).assign(prompting="few shot")
    endpoint = ReplayEndpoint.load(write_dataset(tmp_path / "spaced", logs))
    request = {**GOOD, "messages": [{"role": "system", "content": "cabench replay; prompting: few shot"},
                                    GOOD["messages"][1]]}
    answered, _ = endpoint.complete(request)
    assert answered["choices"][0]["message"]["content"] == replay_answer("q000", bool(logs["correct"].iloc[0]))
    twins = spread_logs(2, 5, seed=3).assign(model="model00")
    with pytest.raises(CabenchError, match=r"configurations 'cfg00' and 'cfg01' have the same model, temperature, "
                                           r"max_new_tokens and prompting"):
        ReplayEndpoint.load(write_dataset(tmp_path / "twins", twins))


def test_usage_is_split_as_the_logs_split_it_where_the_completion_fits_max_tokens(tmp_path):
    """Logs counting prompt and completion tokens (the shipped jhu-temperature logs do) were served as completion =
    min(tokens, max_tokens) and the rest as prompt, so a run priced per input and output token against serve was
    charged otherwise than a replay; a logged completion above max_tokens (no reply could have it) keeps that split."""
    logs = spread_logs(2, 5, seed=3)
    logs["tokens"] = logs["tokens"].round()
    logs["completion_tokens"] = [30.0] * (len(logs) - 1) + [logs["tokens"].iloc[-1] - 1]
    logs["prompt_tokens"] = logs["tokens"] - logs["completion_tokens"]
    endpoint = ReplayEndpoint.load(write_dataset(tmp_path / "parts", logs))
    answered, _ = endpoint.complete(GOOD)  # cfg00 on q000: 30 completion tokens of its total, within 128
    total = int(logs["tokens"].iloc[0])
    assert answered["usage"] == {"prompt_tokens": total - 30, "completion_tokens": 30, "total_tokens": total}
    last = logs.iloc[-1]
    request = {**GOOD, "model": last["model"], "max_tokens": 10,
               "messages": [GOOD["messages"][0], {"role": "user", "content": f"cabench replay instance: "
                                                                             f"{last['instance_id']}"}]}
    endpoint.configs[("model01", 0.5, 10, "direct")] = last["config_id"]  # the same row, asked with max_tokens 10
    answered, _ = endpoint.complete(request)
    assert answered["usage"]["completion_tokens"] == 10  # the logged completion does not fit: the total up to it


def stop_at_once(server) -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize("said", [True, False], ids=["dataset.yaml says so", "a copy said to be real"])
def test_serving_surrogate_logs_says_so_and_real_logs_do_not(dataset, monkeypatch, tmp_path, said):
    """`cabench serve` of a surrogate dataset says its answers are the surrogate logs' (as every report of them
    does), also of the shipped logs in a folder whose dataset.yaml calls them real; real logs get no such line."""
    from cabench.data.io import write_metadata

    monkeypatch.setattr(ThreadingHTTPServer, "serve_forever", stop_at_once)
    folder = DATA / "piqa"
    if not said:
        folder = tmp_path / "mine"
        folder.mkdir()
        (folder / "logs.csv.gz").write_bytes((DATA / "piqa" / "logs.csv.gz").read_bytes())
        write_metadata({"name": "mine", "description": "ours", "provenance": "ours", "surrogate": False,
                        "licence": "CC0-1.0"}, folder / "dataset.yaml")
    surrogate = cli("serve", folder, "--port", 0)
    real = cli("serve", dataset, "--port", 0)
    assert surrogate.exit_code == 0 and real.exit_code == 0, (surrogate.stderr, real.stderr)
    lines = surrogate.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"serving {folder} at http://127.0.0.1:"), lines
    assert lines[1] == (f"{folder}: surrogate logs calibrated to the paper's published statistics (not the "
                        "paper's data); its answers are not real model outputs")
    assert "surrogate" not in real.stderr and len(real.stderr.strip().splitlines()) == 1, real.stderr


def test_a_folder_of_logs_without_dataset_yaml_is_served(tmp_path):
    """serve needs only the logs: a folder without a dataset.yaml was served, then refused once serve read it to
    know whether the logs are surrogate. It is served, as real logs (their rows are not the shipped ones)."""
    from cabench.data.io import write_logs

    (tmp_path / "bare").mkdir()
    write_logs(spread_logs(2, 5, seed=3), tmp_path / "bare" / "logs.csv.gz")
    endpoint = ReplayEndpoint.load(tmp_path / "bare")
    assert endpoint.models() and not endpoint.surrogate
    (tmp_path / "bare" / "dataset.yaml").write_text("surrogate: true\nnme: bare\n")  # damaged: refused, not served
    with pytest.raises(CabenchError, match="dataset.yaml"):  # as real logs, its label unread
        ReplayEndpoint.load(tmp_path / "bare")


def test_partial_credit_is_served_and_scored_as_logged(tmp_path):
    """Logs of fractional scores (a judge's grade) were served right where the score was 0.5 or more and wrong
    below: c0's 0.600 and c2's 0.717 came back 0.817 and 0.683, and a live run ranked them the other way round. The
    replay task now reads back every score as logged."""
    from cabench.live.tasks import replay_task

    logs = spread_logs(2, 5, seed=3)
    logs["correct"] = [0.0, 1.0, 0.25, 0.6, 1 / 3, 0.5, 0.49, 0.999, 0.0, 1.0]
    folder = write_dataset(tmp_path / "graded", logs)
    endpoint, task = ReplayEndpoint.load(folder), replay_task(folder)
    by_id = {i.id: i for i in task.instances}
    for row in logs.itertuples():
        request = {**GOOD, "model": row.model, "messages": [GOOD["messages"][0], {
            "role": "user", "content": f"cabench replay instance: {row.instance_id}"}]}
        answered, _ = endpoint.complete(request)
        reply = answered["choices"][0]["message"]["content"]
        assert task.score(by_id[row.instance_id], reply) == row.correct, (row, reply)
    assert replay_answer("q000", 1) == "answer q000" and replay_answer("q000", 0) == "not the answer to q000"
    q = by_id["q000"]
    for forged in ("answer q000 scoring 1.5", "answer q000 scoring nan", "answer q000 scoring x", "answer q001"):
        assert task.score(q, forged) == 0.0, forged  # no score outside [0, 1], nor another instance's answer
