"""A hostile OpenAI-compatible endpoint on 127.0.0.1 for the live budget tests.

It answers replay requests of a dataset (as ``cabench serve`` does) but
misbehaves as told: lies in ``usage`` (negative, huge, non-finite, text,
missing), malformed replies, failing every call after a number of requests,
trickling bytes of a reply that never ends, ``Retry-After: 100000``, echoing the
``Authorization`` header, oversized and gzip-bomb bodies. Whatever it says, it keeps
its own count of the tokens it generated: the logged tokens of every request it
answered with a generation (everything but a refusal: 403 and 429 generate nothing).
It can also stop the client's process (SIGSTOP) when a given request arrives
(:class:`ClientStop`), so that a test kills it with that call in flight: a state, not a time.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import signal
import threading
import time
import zlib
from collections.abc import Callable
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pandas as pd

_INSTANCE = re.compile(r"cabench replay instance: (.+)$")
_PROMPTING = re.compile(r"prompting: (\S+)")

# behaviour -> what the reply is; each takes (handler, honest reply payload, true tokens, max_tokens)
REFUSALS = {"forbidden", "retry-after"}


@cache
def gzip_bomb() -> bytes:
    """50 MB of a reply's JSON in 49 kB of gzip, made once (before a request: never within a deadline)."""
    reply = {"choices": [{"message": {"role": "assistant", "content": "answer"}}],
             "usage": {"prompt_tokens": 10, "completion_tokens": 10}}
    return gzip.compress(json.dumps(reply).encode()[:-1] + b" " * 50_000_000 + b"}", 9)


class HostileEndpoint:
    """The dataset's rows, the behaviour per request, and the endpoint's own token count."""

    def __init__(self, dataset: Path, behave: Callable[[int], str], trickle_s: float = 0.05) -> None:
        frame = pd.read_csv(dataset / "logs.csv.gz", dtype={"instance_id": str})
        self.config_of = {(r.model, int(r.max_new_tokens), r.prompting): r.config_id
                          for r in frame.drop_duplicates("config_id").itertuples()}
        self.rows = {(r.config_id, r.instance_id): (int(r.correct), int(r.tokens)) for r in frame.itertuples()}
        self.behave = behave
        self.trickle_s = trickle_s
        self.generated = 0  # the endpoint's own count: what it would bill
        self.requests = 0
        self.seen_authorization: list[str] = []
        self.seen_paths: list[str] = []  # each request's path and query, as received
        self.trickled: list[tuple[int, int]] = []  # per trickled reply: (bytes written before the client hung up, size)
        self.trickles_started = 0  # replies the endpoint began to trickle (an attempt whose deadline passed before
        # its request arrived, on a loaded machine, starts none)
        self.lock = threading.Lock()
        self.stop = ClientStop()
        gzip_bomb()

    def honest(self, body: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        """The reply ``cabench serve`` would give, its true tokens, and the request's max_tokens."""
        messages = body["messages"]
        prompting = _PROMPTING.search(messages[0]["content"]).group(1)
        instance = _INSTANCE.search(messages[1]["content"]).group(1)
        limit = int(body["max_tokens"])
        config = self.config_of[(body["model"], limit, prompting)]
        correct, tokens = self.rows[(config, instance)]
        completion = min(tokens, limit)
        text = f"answer {instance}" if correct else f"not the answer to {instance}"
        return ({"choices": [{"message": {"role": "assistant", "content": text}}],
                 "usage": {"prompt_tokens": tokens - completion, "completion_tokens": completion},
                 # a latency per configuration that is the same in every process (hash() of a str is not)
                 "cabench": {"latency_s": 0.1 + 0.01 * (zlib.crc32(config.encode()) % 50)}}, tokens, limit)


class ClientStop:
    """Stops the client's process (SIGSTOP) when a given request arrives, before it is answered: the call
    stays in flight until the test kills the process. The server calls :meth:`request` for each request."""

    def __init__(self) -> None:
        self.at: int | None = None
        self.pid = 0
        self.known = threading.Event()
        self.stopped = threading.Event()
        self.lock = threading.Lock()

    def arm(self, at: int | None) -> None:
        """Stop at request number ``at`` (None: never) the process :meth:`started` names next."""
        self.at = at
        self.known.clear()
        self.stopped.clear()

    def started(self, pid: int) -> None:
        self.pid = pid
        self.known.set()

    def request(self, number: int) -> None:
        if self.at is None or number < self.at:
            return
        self.known.wait()
        with self.lock:
            if not self.stopped.is_set():
                os.kill(self.pid, signal.SIGSTOP)
                self.stopped.set()


def _handler(endpoint: HostileEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *args: Any) -> None:
            pass

        def send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with endpoint.lock:
                endpoint.requests += 1
                number = endpoint.requests
                endpoint.seen_authorization.append(self.headers.get("Authorization", ""))
                endpoint.seen_paths.append(self.path)
            endpoint.stop.request(number)
            how = endpoint.behave(number)
            reply, tokens, limit = endpoint.honest(body)
            if how not in REFUSALS:
                with endpoint.lock:
                    endpoint.generated += tokens
            try:
                self.answer(how, reply, limit)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its deadline) or was killed

        def answer(self, how: str, reply: dict[str, Any], limit: int) -> None:
            usage = reply["usage"]
            auth = self.headers.get("Authorization", "")
            if how == "honest":
                return self.send(200, json.dumps(reply).encode())
            if how == "forbidden":
                return self.send(403, json.dumps({"error": {"message": "no access"}}).encode())
            if how == "retry-after":
                return self.send(429, b'{"error": {"message": "slow down"}}', {"Retry-After": "100000"})
            if how == "failed-negative":
                return self.send(500, json.dumps({"error": "boom", "usage": {"prompt_tokens": -1000,
                                                                             "completion_tokens": 0}}).encode())
            if how == "negative":
                usage["prompt_tokens"] = -1000
            elif how == "huge":
                usage["completion_tokens"] = 100000
            elif how == "huge-prompt":  # a whole count, far above the bytes of any prompt
                usage["prompt_tokens"] = 10**12
            elif how == "float-prompt":  # a whole float beyond any count
                usage["prompt_tokens"] = 1.7e308
            elif how in ("inf", "nan"):
                text = json.dumps(reply).replace(f'"completion_tokens": {usage["completion_tokens"]}',
                                                 f'"completion_tokens": {"Infinity" if how == "inf" else "NaN"}')
                return self.send(200, text.encode())
            elif how == "fraction":
                usage["completion_tokens"] = 0.5
            elif how == "text-usage":
                reply["usage"] = "lots"
            elif how == "list-usage":
                reply["usage"] = [1, 2]
            elif how == "missing":
                del reply["usage"]
            elif how in ("hidden-reasoning", "hidden-in-total"):  # a thinking model through a gateway: the
                # completion said to be 1, the rest only in the reasoning count or in the total (which it bills)
                hidden = usage["completion_tokens"] - 1
                usage["completion_tokens"] = 1
                usage["total_tokens"] = usage["prompt_tokens"] + 1 + hidden
                if how == "hidden-reasoning":
                    usage["completion_tokens_details"] = {"reasoning_tokens": hidden}
                    del usage["total_tokens"]
            elif how == "no-completion":  # the prompt counted, no completion token: free under cost: completion
                usage["prompt_tokens"], usage["completion_tokens"] = usage["prompt_tokens"] + 10, 0
            elif how == "choices-text":
                reply["choices"] = "answer"
            elif how == "message-text":
                reply["choices"] = [{"message": "answer"}]
            elif how == "array":
                return self.send(200, b"[1, 2, 3]")
            elif how == "latency-text":
                reply["cabench"] = {"latency_s": "fast"}
            elif how == "latency-negative":
                reply["cabench"] = {"latency_s": -3.0}
            elif how == "latency-zero":
                reply["cabench"] = {"latency_s": 0}
            elif how == "latency-missing":
                del reply["cabench"]
            elif how == "bigint":
                text = json.dumps(reply).replace(f'"completion_tokens": {usage["completion_tokens"]}',
                                                 f'"completion_tokens": {"9" * 400}')
                return self.send(200, text.encode())
            elif how == "echo-usage":
                usage["prompt_tokens"] = f"you sent {auth}"
            elif how == "gzip-forbidden":
                return self.send(403, gzip.compress(b'{"error": "' + b"no " * 5000 + b'"}'),
                                 {"Content-Encoding": "gzip"})
            elif how == "echo-error":
                return self.send(500, json.dumps({"error": f"bad header Authorization: {auth}"}).encode())
            elif how == "echo-reply":
                reply["choices"][0]["message"]["content"] += f" (you sent {auth})"
            elif how == "cut":  # a 200 with its length, half the body, then the connection closed
                payload = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload[: len(payload) // 2])
                self.wfile.flush()
                self.close_connection = True
                return None
            elif how == "oversized":
                reply["padding"] = "x" * 200_000
            elif how == "gzip-bomb":
                return self.send(200, gzip_bomb(), {"Content-Encoding": "gzip"})
            elif how == "trickle":  # every byte but the last, slowly; the last never (until the client hangs up)
                payload = json.dumps(reply).encode()
                with endpoint.lock:
                    endpoint.trickles_started += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                written = 0
                try:
                    for i in range(len(payload) - 1):
                        self.wfile.write(payload[i:i + 1])
                        self.wfile.flush()
                        written += 1
                        time.sleep(endpoint.trickle_s)
                    self.connection.recv(1)  # returns when the client closes the connection
                finally:
                    with endpoint.lock:
                        endpoint.trickled.append((written, len(payload)))
                return None
            else:
                raise ValueError(how)
            return self.send(200, json.dumps(reply).encode())

    return Handler


class _Quiet(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up mid-reply is what these tests do on purpose


def start(endpoint: HostileEndpoint) -> tuple[ThreadingHTTPServer, str]:
    """Serve ``endpoint`` on an ephemeral loopback port in a daemon thread; returns (server, base URL).
    ``server.shutdown()`` returns within 0.05 s (the loop's poll interval)."""
    server = _Quiet(("127.0.0.1", 0), _handler(endpoint))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


MIXED = ("failed-negative", "negative", "huge", "inf", "nan", "missing", "text-usage", "choices-text",
         "latency-negative", "retry-after", "trickle", "forbidden")


def mixed(seed: int, honest_share: float = 0.6, honest_first: int = 0, leave_out: tuple[str, ...] = ()
          ) -> Callable[[int], str]:
    """Every kind of misbehaviour (but ``leave_out``), drawn per request after the first ``honest_first`` (a
    seeded draw: the same sequence each time)."""
    kinds = [kind for kind in MIXED if kind not in leave_out]
    draws = random.Random(seed)
    table = [("honest" if draws.random() < honest_share else draws.choice(kinds)) for _ in range(100_000)]
    return lambda number: "honest" if number <= honest_first else table[(number - 1) % len(table)]
