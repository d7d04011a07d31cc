"""Calls to an OpenAI-compatible chat-completions endpoint, with retries and a record of every attempt.

Uses ``httpx`` (the ``live`` extra). Retries 429, 5xx, timeouts and connection
errors with exponential backoff and full jitter; other 4xx answers are final.
The API key comes from an environment variable and is sent only in the
``Authorization`` header: it is never logged or written.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass, field
from typing import Any

from cabench.errors import CabenchError

RETRYABLE = {408, 409, 429, 500, 502, 503, 504}


@dataclass(frozen=True)
class Endpoint:
    """Where and how to call (from the live config's ``endpoint``)."""

    base_url: str
    api_key_env: str | None = None
    timeout_s: float = 120.0
    max_retries: int = 6
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    concurrency: int = 4


@dataclass
class Attempt:
    status: str  # "ok", "http <code>", "timeout", "connection"
    seconds: float


@dataclass
class Outcome:
    """A finished call: its reply and usage, or why it failed, and every attempt it took."""

    ok: bool
    reply: str = ""
    prompt_tokens: float | None = None
    completion_tokens: float | None = None
    latency_s: float = 0.0  # of the successful attempt, measured here
    reported_latency_s: float | None = None  # what a cabench serve endpoint reports (the logged latency)
    error: str = ""
    attempts: list[Attempt] = field(default_factory=list)


class ChatClient:
    """A thread-safe client for one endpoint."""

    def __init__(self, endpoint: Endpoint, seed: int = 0) -> None:
        try:
            import httpx
        except ImportError as exc:
            raise CabenchError("live evaluation needs httpx: pip install 'cabench[live]'") from exc
        self.httpx = httpx
        self.endpoint = endpoint
        headers = {"Content-Type": "application/json"}
        if endpoint.api_key_env:
            key = os.environ.get(endpoint.api_key_env)
            if not key:
                raise CabenchError(f"endpoint.api_key_env: the environment variable {endpoint.api_key_env} is not "
                                   "set; export it (the key is never written anywhere)")
            headers["Authorization"] = f"Bearer {key}"
        limits = httpx.Limits(max_connections=max(1, endpoint.concurrency) + 2)
        self.client = httpx.Client(base_url=endpoint.base_url.rstrip("/") + "/", headers=headers,
                                   timeout=endpoint.timeout_s, limits=limits)
        self.rng = random.Random(seed)

    def close(self) -> None:
        self.client.close()

    def chat(self, body: dict[str, Any]) -> Outcome:
        """POST ``chat/completions`` with retries; never raises for a failed call."""
        outcome = Outcome(ok=False)
        for attempt in range(self.endpoint.max_retries + 1):
            start = time.perf_counter()
            retry_after = None
            try:
                response = self.client.post("chat/completions", json=body)
                seconds = time.perf_counter() - start
                if response.status_code == 200:
                    data = response.json()
                    usage = data.get("usage") or {}
                    choice = (data.get("choices") or [{}])[0]
                    message = choice.get("message") or {}
                    outcome.attempts.append(Attempt("ok", seconds))
                    outcome.ok = True
                    outcome.reply = str(message.get("content") or "")
                    outcome.prompt_tokens = usage.get("prompt_tokens")
                    outcome.completion_tokens = usage.get("completion_tokens")
                    outcome.latency_s = seconds
                    extra = data.get("cabench") if isinstance(data.get("cabench"), dict) else {}
                    outcome.reported_latency_s = extra.get("latency_s")
                    return outcome
                outcome.attempts.append(Attempt(f"http {response.status_code}", seconds))
                outcome.error = f"HTTP {response.status_code}: {response.text[:200]}"
                if response.status_code not in RETRYABLE:
                    return outcome
                retry_after = response.headers.get("Retry-After")
            except self.httpx.TimeoutException:
                outcome.attempts.append(Attempt("timeout", time.perf_counter() - start))
                outcome.error = f"timed out after {self.endpoint.timeout_s:g} s"
            except (self.httpx.TransportError, ValueError) as exc:
                outcome.attempts.append(Attempt("connection", time.perf_counter() - start))
                outcome.error = f"{type(exc).__name__}: {exc}"[:200]
            if attempt < self.endpoint.max_retries:
                cap = min(self.endpoint.max_backoff_s, self.endpoint.backoff_s * 2**attempt)
                wait = self.rng.uniform(0, cap)  # full jitter
                if retry_after is not None:
                    try:
                        wait = max(wait, float(retry_after))
                    except ValueError:
                        pass
                time.sleep(wait)
        return outcome
