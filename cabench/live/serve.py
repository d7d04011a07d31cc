"""``cabench serve``: an OpenAI-compatible endpoint that answers as a dataset's logged configurations did.

``POST /v1/chat/completions`` picks the configuration by ``model``,
``temperature``, ``max_tokens`` and the prompting style named in the replay
task's system message, and the instance by the replay task's user message; it
answers with the replay task's correct or wrong text according to the log,
reports the logged tokens in ``usage`` (completion tokens up to ``max_tokens``,
the rest as prompt tokens) and the logged latency in a ``cabench`` field, after
a delay of latency × ``latency_scale``. ``GET /v1/models`` lists the models.
Faults can be injected: a share of requests answered 429 or 500, or held past
the client's timeout. It is the test server of the live path and a demo; it
needs no key and listens on 127.0.0.1 by default.
"""

from __future__ import annotations

import json
import random
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cabench.data.io import read_logs
from cabench.errors import CabenchError
from cabench.live.tasks import replay_answer

_INSTANCE = re.compile(r"cabench replay instance: (.+)$")
_PROMPTING = re.compile(r"prompting: (\S+)")
FAULTS = ("429", "500", "timeout")


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
        out[kind] = value
    if sum(out.values()) >= 1:
        raise CabenchError("--fail-rate: the shares add up to 1 or more; no request would succeed")
    return out


@dataclass
class ReplayEndpoint:
    """The logged configurations of a dataset, indexed for serving."""

    configs: dict[tuple[str, float, int, str], str]
    rows: dict[tuple[str, str], tuple[float, float, float]]  # (config, instance) -> correct, latency, tokens
    latency_scale: float = 0.0
    faults: dict[str, float] = field(default_factory=dict)
    hold_s: float = 30.0
    seed: int = 0
    requests: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _rng: random.Random = field(default_factory=random.Random)

    @classmethod
    def load(cls, dataset: Path, **options: Any) -> ReplayEndpoint:
        frame, _ = read_logs(dataset)
        configs = {}
        for row in frame.drop_duplicates("config_id").itertuples(index=False):
            configs[(row.model, round(float(row.temperature), 9), int(row.max_new_tokens), row.prompting)] = \
                row.config_id
        rows = {(r.config_id, r.instance_id): (float(r.correct), float(r.latency_s), float(r.tokens))
                for r in frame.itertuples(index=False)}
        endpoint = cls(configs, rows, **options)
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

    def complete(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        """(HTTP status, response, delay in seconds) for a chat-completions request."""
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, _error("messages: expected a list of chat messages"), 0.0
        text = "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
        instance = _INSTANCE.search(text)
        prompting = _PROMPTING.search(text)
        if not instance or not prompting:
            return 400, _error("not a cabench replay prompt (cabench serve answers the replay task only)"), 0.0
        try:
            key = (str(body.get("model")), round(float(body.get("temperature", 1.0)), 9),
                   int(body.get("max_tokens", body.get("max_completion_tokens", 0))), prompting.group(1))
        except (TypeError, ValueError):
            return 400, _error("temperature and max_tokens must be numbers"), 0.0
        config = self.configs.get(key)
        if config is None:
            return 404, _error(f"no logged configuration with model={key[0]}, temperature={key[1]}, "
                               f"max_tokens={key[2]}, prompting={key[3]}"), 0.0
        row = self.rows.get((config, instance.group(1).strip()))
        if row is None:
            return 404, _error(f"instance {instance.group(1)!r} is not in the log of {config}"), 0.0
        correct, latency, tokens = row
        completion = int(min(tokens, key[2])) if key[2] > 0 else int(tokens)
        reply = replay_answer(instance.group(1).strip(), correct >= 0.5)
        response = {
            "id": f"cabench-{self.requests}", "object": "chat.completion", "created": int(time.time()),
            "model": key[0],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": int(tokens) - completion, "completion_tokens": completion,
                      "total_tokens": int(tokens)},
            "cabench": {"config_id": config, "latency_s": latency},
        }
        return 200, response, latency * self.latency_scale


def _error(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind}}


def make_server(endpoint: ReplayEndpoint, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def setup(self) -> None:
            super().setup()
            # one small answer per request: send it at once (no Nagle delay waiting for the client's ACK)
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_GET(self) -> None:  # noqa: N802
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "cabench"}
                                                             for m in endpoint.models()]})
            else:
                self._send(404, _error(f"no route {self.path}"))

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length", 0))
            raw = self.rfile.read(length)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, _error(f"no route {self.path}"))
                return
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                self._send(400, _error("the body is not JSON"))
                return
            fault = endpoint.fault()
            if fault == "429":
                self._send(429, _error("rate limited (injected)", "rate_limit_error"), {"Retry-After": "0"})
                return
            if fault == "500":
                self._send(500, _error("server error (injected)", "server_error"))
                return
            if fault == "timeout":
                time.sleep(endpoint.hold_s)
            status, payload, delay = endpoint.complete(body if isinstance(body, dict) else {})
            if delay > 0:
                time.sleep(delay)
            self._send(status, payload)

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def serve_in_thread(endpoint: ReplayEndpoint, host: str = "127.0.0.1", port: int = 0) -> tuple[ThreadingHTTPServer,
                                                                                                threading.Thread]:
    """Start a server on a free port (``port=0``) in a daemon thread; ``server.server_address`` has the port."""
    server = make_server(endpoint, host, port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread
