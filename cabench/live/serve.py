"""``cabench serve``: an OpenAI-compatible endpoint that answers as a dataset's logged configurations did.

``POST /v1/chat/completions`` picks the configuration by ``model``,
``temperature``, ``max_tokens`` and the prompting style named in the replay
task's system message, and the instance by the replay task's user message; it
answers with the replay task's text for the logged score (right, wrong, or a partial credit as logged),
reports the logged tokens in ``usage`` (completion tokens up to ``max_tokens``,
the rest as prompt tokens) and the logged latency in a ``cabench`` field, after
a delay of latency × ``latency_scale``. ``GET /v1/models`` lists the models.
Faults can be injected: a share of requests answered 429 or 500, or held past
the client's timeout. It is the test server of the live path and a demo; it
needs no key and listens on 127.0.0.1 by default.

Every malformed request is answered with a 4xx JSON error in the OpenAI style
(``{"error": {"message", "type"}}``): a body that is not a UTF-8 JSON object,
nested too deeply, or with fields of the wrong type or not finite (400); a
missing Content-Length (411), a malformed one (400) or one above
``MAX_BODY_BYTES`` (413, never read). The connection stays open for the next
request unless the body could not be delimited (then ``Connection: close``).
"""

from __future__ import annotations

import json
import math
import random
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cabench.data.io import read_logs
from cabench.data.surrogate import folder_is_surrogate
from cabench.errors import CabenchError
from cabench.jsonio import strict_loads
from cabench.live.tasks import replay_answer, replay_key

_INSTANCE = re.compile(r"cabench replay instance: (.+)$")
_PROMPTING = re.compile(r"prompting: (.+)$", re.MULTILINE)  # the rest of the line: a prompting may hold spaces
FAULTS = ("429", "500", "timeout")
MAX_BODY_BYTES = 1 << 20  # a replay request is a few hundred bytes
MAX_WAIT_S = 86_400  # the longest an answer is delayed or an injected timeout held
OPTION_RANGES = {"--port": (0, 65_535), "--latency-scale": (0, 1_000), "--hold-s": (0, MAX_WAIT_S),
                 "--seed": (0, 2**63 - 1)}


def check_option(flag: str, value: float) -> None:
    """Refuse a number outside its option's range (NaN and infinities included), in one line naming it."""
    low, high = OPTION_RANGES[flag]
    if not low <= value <= high:
        raise CabenchError(f"{flag} {value}: expected a number from {low} to {high}")


def parse_faults(text: str | None) -> dict[str, float]:
    """``429=0.2,500=0.05,timeout=0.01`` -> shares of requests per fault."""
    out: dict[str, float] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        kind, sep, share = item.partition("=")
        kind = kind.strip()
        if not sep or kind not in FAULTS:
            raise CabenchError(f"--fail-rate {item}: expected KIND=SHARE with KIND one of {', '.join(FAULTS)}")
        try:
            value = float(share)
        except ValueError:
            raise CabenchError(f"--fail-rate {item}: '{share}' is not a number") from None
        if not 0 <= value < 1:
            raise CabenchError(f"--fail-rate {item}: a share in [0, 1)")
        if kind in out:  # the later would replace the earlier unsaid, and the shares' sum be checked without it
            raise CabenchError(f"--fail-rate {item}: {kind} is given twice; give each kind once")
        out[kind] = value
    if sum(out.values()) >= 1:
        raise CabenchError("--fail-rate: the shares add up to 1 or more; no request would succeed")
    return out


class Refused(Exception):
    """A request answered with a 4xx JSON error; ``close`` when its body could not be delimited, so the
    connection cannot carry another request."""

    def __init__(self, status: int, message: str, close: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.close = close


def body_length(headers: Any, required: bool) -> int:
    """The length of the body a request announces (0 when none and not ``required``), or Refused."""
    if headers.get("Transfer-Encoding") is not None:
        raise Refused(411, "send the body with a Content-Length (chunked bodies are not read)", close=True)
    values = {value.strip() for value in headers.get_all("Content-Length") or []}
    if not values:
        if required:
            raise Refused(411, "a POST needs a Content-Length header")
        return 0
    if len(values) > 1:
        raise Refused(400, "conflicting Content-Length headers", close=True)
    value = values.pop()
    if not re.fullmatch(r"[0-9]+", value):
        raise Refused(400, f"Content-Length {_clip(value)!r} is not a number of bytes", close=True)
    digits = value.lstrip("0") or "0"
    if len(digits) > len(str(MAX_BODY_BYTES)) or int(digits) > MAX_BODY_BYTES:
        raise Refused(413, f"Content-Length {_clip(value)}: the body may have at most {MAX_BODY_BYTES} bytes",
                      close=True)
    return int(digits)


def parse_body(raw: bytes) -> dict[str, Any]:
    """The JSON object of a request body, or Refused (400) for anything else."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(400, f"the body is not UTF-8 text (byte {exc.start})") from None
    try:
        body = strict_loads(text)
    except RecursionError:
        raise Refused(400, "the body is not JSON: nested too deeply") from None
    except ValueError as exc:  # a syntax error, NaN/Infinity, an integer of too many digits
        raise Refused(400, f"the body is not JSON: {_clip(str(exc))}") from None
    if not isinstance(body, dict):
        raise Refused(400, f"the body must be a JSON object, not {_json_kind(body)}")
    return body


def _json_kind(value: Any) -> str:
    """How JSON names the type of a parsed value, for error messages."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return f"the number {_clip(repr(value))}"
    return "a string" if isinstance(value, str) else "an array" if isinstance(value, list) else "an object"


def _clip(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def request_key(body: dict[str, Any], prompting: str) -> tuple[str, float, int, str]:
    """(model, temperature, max_tokens, prompting) of a chat request: the logged configuration it asks for."""
    model = body.get("model")
    if not isinstance(model, str):
        raise Refused(400, f"model: expected a string, not {_json_kind(model)}")
    return model, _temperature(body), _max_tokens(body), prompting


def _temperature(body: dict[str, Any]) -> float:
    """The request's finite ``temperature`` (1 when absent or null), rounded as the index is."""
    value = body.get("temperature")
    if value is None:
        return 1.0
    number = math.nan
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an integer beyond the floats
            number = math.inf
    if not math.isfinite(number):
        raise Refused(400, f"temperature: expected a finite number, not {_json_kind(value)}")
    return round(number, 9)


def _max_tokens(body: dict[str, Any]) -> int:
    """The request's ``max_tokens`` (or ``max_completion_tokens``): a whole number, 0 or more (0 when absent)."""
    name = "max_tokens" if body.get("max_tokens") is not None else "max_completion_tokens"
    value = body.get(name)
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise Refused(400, f"{name}: expected a whole number of tokens, 0 or more, not {_json_kind(value)}")
    return value


def _content_text(content: Any) -> str:
    """A chat message's text: its content, or the text of its parts where it is a list of them (OpenAI's
    ``[{"type": "text", "text": ...}]``; a part of another type has none)."""
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content
                         if isinstance(part, dict) and part.get("type") == "text")
    return "" if content is None else str(content)


@dataclass
class ReplayEndpoint:
    """The logged configurations of a dataset, indexed for serving."""

    configs: dict[tuple[str, float, int, str], str]
    rows: dict[tuple[str, str], tuple[float, float, float]]  # (config, instance) -> correct, latency, tokens
    splits: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)  # -> prompt, completion, as logged
    latency_scale: float = 0.0
    faults: dict[str, float] = field(default_factory=dict)
    hold_s: float = 30.0
    seed: int = 0
    read_timeout_s: float = 60.0  # each read of a request (and an idle connection) waits at most this long
    surrogate: bool = False  # the logs are surrogate (their dataset.yaml says so, or they are the shipped ones' rows)
    requests: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        for flag, value in (("--latency-scale", self.latency_scale), ("--hold-s", self.hold_s),
                            ("--seed", self.seed)):
            check_option(flag, value)

    @classmethod
    def load(cls, dataset: Path, **options: Any) -> ReplayEndpoint:
        frame, _ = read_logs(dataset)
        configs: dict[tuple[str, float, int, str], str] = {}
        for row in frame.drop_duplicates("config_id").itertuples(index=False):
            key = replay_key(row.model, row.temperature, row.max_new_tokens, row.prompting)
            if key in configs:  # a request names its configuration by these four: the later would hide the earlier
                raise CabenchError(
                    f"{dataset}: configurations '{configs[key]}' and '{row.config_id}' have the same model, "
                    "temperature, max_new_tokens and prompting, which are all a request names, so serve cannot "
                    "tell them apart; give them distinct metadata (or serve a dataset without one of them)")
            configs[key] = row.config_id
        rows = {(r.config_id, r.instance_id): (float(r.correct), float(r.latency_s), float(r.tokens))
                for r in frame.itertuples(index=False)}
        splits = {}
        if {"prompt_tokens", "completion_tokens"} <= set(frame.columns):  # the logs count both: replayed as logged
            parts = frame[["config_id", "instance_id", "prompt_tokens", "completion_tokens", "tokens"]].dropna()
            splits = {(r.config_id, r.instance_id): (int(r.prompt_tokens), int(r.completion_tokens))
                      for r in parts.itertuples(index=False) if r.prompt_tokens + r.completion_tokens == r.tokens}
        endpoint = cls(configs, rows, splits=splits, surrogate=folder_is_surrogate(dataset, frame), **options)
        endpoint._rng.seed(endpoint.seed)
        return endpoint

    def models(self) -> list[str]:
        return sorted({m for m, _, _, _ in self.configs})

    def fault(self) -> str | None:
        with self._lock:
            self.requests += 1
            draw = self._rng.random()
        edge = 0.0
        for kind in FAULTS:
            edge += self.faults.get(kind, 0.0)
            if draw < edge:
                return kind
        return None

    def complete(self, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """(response, delay in seconds) for a chat-completions request; Refused when it cannot be answered."""
        messages = body.get("messages")
        if not isinstance(messages, list):
            raise Refused(400, f"messages: expected a list of chat messages, not {_json_kind(messages)}")
        if not messages:
            raise Refused(400, "messages: the list is empty; give at least one chat message")
        text = "\n".join(_content_text(m.get("content")) for m in messages if isinstance(m, dict))
        instance = _INSTANCE.search(text)
        prompting = _PROMPTING.search(text)
        if not instance or not prompting:
            raise Refused(400, "not a cabench replay prompt (cabench serve answers the replay task only)")
        key = request_key(body, prompting.group(1).strip())
        config = self.configs.get(key)
        if config is None:
            raise Refused(404, f"no logged configuration with model={_clip(key[0])}, temperature={key[1]}, "
                               f"max_tokens={_clip(str(key[2]))}, prompting={_clip(key[3])}")
        instance_id = instance.group(1).strip()
        row = self.rows.get((config, instance_id))
        if row is None:
            raise Refused(404, f"instance {_clip(instance_id)!r} is not in the log of {config}")
        correct, latency, tokens = row
        completion = int(min(tokens, key[2])) if key[2] > 0 else int(tokens)
        logged = self.splits.get((config, instance_id))
        if logged is not None and (key[2] <= 0 or logged[1] <= key[2]):  # a completion within max_tokens: as logged
            completion = logged[1]
        reply = replay_answer(instance_id, correct)  # the logged score, partial credit too
        response = {
            "id": f"cabench-{self.requests}", "object": "chat.completion", "created": int(time.time()),
            "model": key[0],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": int(tokens) - completion, "completion_tokens": completion,
                      "total_tokens": int(tokens)},
            "cabench": {"config_id": config, "latency_s": latency},
        }
        return response, min(latency * self.latency_scale, MAX_WAIT_S)


def _error(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind}}


def make_server(endpoint: ReplayEndpoint, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A threaded HTTP server answering for ``endpoint`` on ``host:port``; CabenchError when it cannot listen."""
    check_option("--port", port)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        default_request_version = "HTTP/1.1"  # answer an unreadable request line with a status line too
        timeout = endpoint.read_timeout_s

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def setup(self) -> None:
            super().setup()
            # one small answer per request: send it at once (no Nagle delay waiting for the client's ACK)
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None,
                  close: bool = False) -> None:
            data = json.dumps(payload).encode()
            if close:
                self.close_connection = True
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in {**(headers or {}), **({"Connection": "close"} if close else {})}.items():
                    self.send_header(k, v)
                self.end_headers()
                if self.command != "HEAD":  # a HEAD answer has headers only (RFC 9110 §9.3.2)
                    self.wfile.write(data)
            except OSError:  # the client has gone
                self.close_connection = True

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            """The protocol errors http.server finds (request line, headers, method) as JSON errors too; the
            connection closes, as the rest of the request was not read."""
            headers = {}
            if code == HTTPStatus.NOT_IMPLEMENTED:  # a method without a do_ handler
                code, message, headers = 405, f"method {_clip(str(self.command))} is not served", \
                    {"Allow": "GET, POST"}
            self._send(code, _error(_clip(message or HTTPStatus(code).phrase)), headers, close=True)

        def do_GET(self) -> None:  # noqa: N802
            self._answer(self._models)

        def do_POST(self) -> None:  # noqa: N802
            self._answer(self._chat)

        def _answer(self, respond: Callable[[bytes], None]) -> None:
            """Read the request's body and ``respond(body)``; a refused request is answered with its error."""
            try:
                respond(self._read_body())
            except Refused as refused:
                self._send(refused.status, _error(str(refused)), close=refused.close)

        def _read_body(self) -> bytes:
            length = body_length(self.headers, required=self.command == "POST")
            try:
                raw = self.rfile.read(length)
            except TimeoutError:
                raise Refused(408, f"the body did not arrive within {endpoint.read_timeout_s:g} s",
                              close=True) from None
            if len(raw) < length:
                raise Refused(400, f"the body ended after {len(raw)} of {length} bytes", close=True)
            return raw

        def _route(self, tail: str) -> None:
            if not self.path.rstrip("/").endswith(tail):
                raise Refused(404, f"no route {_clip(self.path)}")

        def _models(self, raw: bytes) -> None:
            self._route("/models")
            self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "cabench"}
                                                         for m in endpoint.models()]})

        def _chat(self, raw: bytes) -> None:
            self._route("/chat/completions")
            body = parse_body(raw)
            fault = endpoint.fault()
            if fault == "429":
                self._send(429, _error("rate limited (injected)", "rate_limit_error"), {"Retry-After": "0"})
                return
            if fault == "500":
                self._send(500, _error("server error (injected)", "server_error"))
                return
            if fault == "timeout":
                time.sleep(endpoint.hold_s)
            payload, delay = endpoint.complete(body)
            time.sleep(delay)
            self._send(200, payload)

    try:
        server = ThreadingHTTPServer((host, port), Handler)
    except (OSError, TypeError, UnicodeError) as exc:  # taken, not an address of this machine, a NUL in it
        raise CabenchError(f"{_clip(host)}:{port}: cannot listen ({getattr(exc, 'strerror', None) or exc}); "
                           "pass another --host or --port") from None
    server.daemon_threads = True
    return server


def serve_in_thread(endpoint: ReplayEndpoint, host: str = "127.0.0.1", port: int = 0) -> tuple[ThreadingHTTPServer,
                                                                                                threading.Thread]:
    """Start a server on a free port (``port=0``) in a daemon thread; ``server.server_address`` has the port.
    ``server.shutdown()`` returns within 0.05 s (the loop's poll interval)."""
    server = make_server(endpoint, host, port)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    return server, thread
