"""Calls to an OpenAI-compatible chat-completions endpoint, with retries and a record of every attempt.

Uses ``httpx`` (the ``live`` extra). Retries 429, 5xx, timeouts and connection
errors with exponential backoff and full jitter; other 4xx answers are final.

Every attempt has a hard wall-time deadline (``timeout_s``): each socket read,
write and connect is bounded by the time left, so a reply trickling a byte at a
time ends at the deadline like a silent one. ``Retry-After`` is honoured up to
``max_backoff_s`` (seconds or an HTTP date; anything else is ignored). A reply
is read up to ``max_reply_bytes``, and gzip or deflate bodies are decompressed
up to the same size, never further.

The API key comes from an environment variable (or the URL's userinfo) and is
sent only in the request; every reply and error text kept from an attempt is
passed through :meth:`ChatClient.redact` first, and the URL is recorded without
its userinfo (:func:`public_url`).
"""

from __future__ import annotations

import base64
import datetime
import email.utils
import json
import math
import os
import random
import re
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit, urlunsplit

from cabench.errors import CabenchError

RETRYABLE = {408, 409, 429, 500, 502, 503, 504}
FREE_STATUSES = {429}  # refused before any generation: never billed
ERROR_BODY_BYTES = 4096
REDACTED = "[redacted]"
#: The shortest text taken for a secret: a local server's placeholder key (``x``, ``1``) is none, and replacing it in
#: replies would mangle them (``12`` written as ``1[redacted]``).
MIN_SECRET = 4
#: A run of this many characters of a secret (or of one of its forms) is redacted wherever it stands: an endpoint
#: may echo a key cut short ("...provided: sk-proj-AbCd...xyz1" without its last character, or its first dozen).
FRAGMENT = 8
_AUTH = re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?:bearer\s+|basic\s+)?[^\s\"',;}]+")
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}")
#: An environment variable's name as a shell writes one: what ``endpoint.api_key_env`` must hold.
VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
#: A variable name messages show: the upper-case form of OPENAI_API_KEY, words joined by '_' (or one short word). A
#: name of lower-case letters and digits is a valid name but may be a key pasted in its place (a hexadecimal key is
#: one), and so may a long run of capitals and digits (AKIAIOSFODNN7EXAMPLE): neither is shown.
_SHOWN_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|_?[A-Z]{1,12}")
#: JSON's escapes a key may be written with in a body: ``\uXXXX`` (never half a surrogate pair), ``\"``, ``\\``
#: and ``\/``, read in one pass (``\\u0041`` is a backslash and ``u0041``); the others (``\n``) are kept, so that
#: an error stays one line.
_ESCAPED = re.compile(r'\\(?:u(?![dD][89a-fA-F])([0-9a-fA-F]{4})|(["\\/]))')
#: An HTML numeric character reference, hexadecimal or decimal (its ``;`` optional, as browsers read it).
_ENTITY = re.compile(r"&#(?:[xX]([0-9a-fA-F]{1,6})|([0-9]{1,7}));?")


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
    max_reply_bytes: int = 8 * 2**20
    max_failures: int = 5
    charge_failed: str = "worst-case"  # "worst-case", "reported" or "none"


def key_variable(name: str) -> str:
    """The environment variable ``name`` as a message says it: by its name where that is written as variables' names
    are (capitals, words joined by '_'), else without it (a key written in place of its variable's name is never
    printed)."""
    if _SHOWN_NAME.fullmatch(name):
        return f"the environment variable {name}"
    return ("the environment variable it names (not shown: a name other than WORDS_IN_CAPITALS may be a key written "
            "in its place)")


@dataclass
class Attempt:
    """One HTTP attempt: ``ok``, ``http <code>``, ``timeout``, ``connection``, ``malformed``, ``too large`` or ``cut
    short`` (a 200 whose body stopped coming: cut off, or timed out while read).

    ``billable``: the endpoint may have generated (and billed) tokens for it; only an attempt that could not
    connect and a 429 are known to be free. ``usage``: the usage a failed reply reported, if any;
    ``served_model``: the model it named.
    """

    status: str
    seconds: float
    billable: bool = True
    usage: Any = None
    served_model: Any = None  # the model a failed reply names, if any (as the endpoint sent it)


#: The statuses of a 200 whose body arrived but could not be read: generated, so billed (and never asked again).
UNREAD = ("malformed", "too large", "cut short")


@dataclass
class Outcome:
    """A finished call: its reply and reported usage, or why it failed, and every attempt it took.

    ``usage`` and ``reported_latency_s`` are passed on as the endpoint sent them (any JSON type); the session
    validates them before anything is counted.
    """

    ok: bool
    reply: str = ""  # as the endpoint sent it (only ever written through :meth:`ChatClient.redact`)
    usage: Any = None
    latency_s: float = 0.0  # of the successful attempt, measured here
    reported_latency_s: Any = None  # what a cabench serve endpoint reports (the logged latency)
    error: str = ""
    attempts: list[Attempt] = field(default_factory=list)
    stopped: str = ""  # why no further attempt was made though one was allowed (the budget)
    served_model: Any = None  # the reply's ``model``, as the endpoint sent it (a gateway may answer with another)

    @property
    def failed(self) -> list[Attempt]:
        """The attempts that did not answer: all of them, or all but the last where the call succeeded."""
        return self.attempts[:-1] if self.ok else self.attempts


def public_url(url: str) -> str:
    """``url`` as it may be recorded: scheme, host, port and path only (``http://user:KEY@host/v1?key=K``
    -> ``http://host/v1``); a key can sit in the userinfo, the query or the fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port is not None else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def url_secrets(url: str) -> list[str]:
    """The parts of a URL that may hold a key: the userinfo (and its password), query values, the fragment;
    each as written and percent-decoded (an endpoint may echo either)."""
    parts = urlsplit(url)
    found = [parts.password, parts.netloc.rpartition("@")[0], parts.fragment]
    found += [value for pair in parts.query.split("&") for value in pair.split("=", 1)[1:]]
    found += [unquote(s) for s in found if s] + [value for _, value in parse_qsl(parts.query, keep_blank_values=True)]
    if parts.username is not None:  # the Basic credential an HTTP client builds from the userinfo, echoed bare
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        found.append(base64.b64encode(pair.encode()).decode())
    return sorted({s for s in found if s and len(s) >= MIN_SECRET}, key=len, reverse=True)


def secret_forms(secret: str, sparse: bool = True) -> list[str]:
    """``secret`` and the forms an endpoint may echo it in, each of which gives it back: percent-encoded (every
    reserved character, or all but ``/``), with JSON's escaped ``\\/``, and in base64 (standard and URL-safe), with
    and without padding; and unless not ``sparse``, the forms whose :data:`FRAGMENT` characters hold under four of
    the key's (every byte percent-encoded, base32), matched whole only: a run of them would redact text that holds
    two or three of its characters (``%73%6B%2D``, the ``sk-`` every key of a provider begins with)."""
    raw = secret.encode()
    encoded = [base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()]
    quoted = [quote(secret, safe=""), quote(secret, safe="/")]
    if sparse:
        encoded.append(base64.b32encode(raw).decode())
        quoted.append("".join(f"%{b:02X}" for b in raw))
    lower = [re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), q) for q in quoted]  # %2f is %2F (RFC 3986)
    forms = [secret, *quoted, *lower, secret.replace("/", "\\/"), *encoded, *(e.rstrip("=") for e in encoded)]
    return [form for form in dict.fromkeys(forms) if len(form) >= MIN_SECRET]


def fragment_forms(key: str) -> list[str]:
    """The forms of the ``api_key_env`` key whose runs of :data:`FRAGMENT` characters are redacted: its
    :func:`secret_forms` but the sparse ones; its base64 wherever it starts in the encoded text (``Bearer KEY``,
    ``user:KEY`` or a JSON document holding it, encoded whole: a key starting 1 or 2 bytes into a 3-byte group gives
    other characters, so each alignment's whole groups are taken); its hexadecimal form; and the key written
    backwards. (The key spaced out, ``s k - p r o j``, is matched whole: eight of its characters are four of the
    key's.)"""
    raw = key.encode()
    aligned = [raw[j:j + 3 * ((len(raw) - j) // 3)] for j in range(3)]
    encoded = [code(part).decode().rstrip("=") for part in aligned
               for code in (base64.b64encode, base64.urlsafe_b64encode)]
    return list(dict.fromkeys([*secret_forms(key, sparse=False), *encoded, raw.hex(), key[::-1]]))


def request_base(url: str) -> tuple[str, str]:
    """The base URL requests are made under (``.../v1/``; ``chat/completions`` is appended to its path) and the
    query every request carries, as written (a key may be given as one: ``...?api-key=K``)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + "/", "", "")), parts.query


def redact(text: str, secrets: list[str], unescape: bool = False, fragments: list[str] | None = None) -> str:
    """``text`` without any of ``secrets``, any run of :data:`FRAGMENT` characters of one of ``fragments`` (the
    key's forms: a key echoed cut short), and the value of any ``Authorization`` header or token; with
    ``unescape`` (a raw JSON body) its ``\\uXXXX`` escapes are read first, so a key written escaped is found too; a
    text whose HTML character references (``&#115;&#107;``) hide something is redacted as they read."""
    if unescape:  # JSON's escapes read (:data:`_ESCAPED`): a key holding a quote or a backslash is written escaped
        text = _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)) if m.group(1) else m.group(2), text)
    shown = _hidden(text, secrets, fragments or [])
    for decoded in (_ENTITY.sub(_entity, text),  # an HTML page's character references (a proxy's error page)
                    _INVISIBLE.sub("", text)):  # a key with zero-width characters between its own
        if decoded != text:  # read where they hide something; elsewhere the text is kept as written
            hidden = _hidden(decoded, secrets, fragments or [])
            if hidden != decoded:
                return hidden
    return shown


#: Characters that show as nothing: a key written with them between its characters reads as the key.
_INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]")


def _hidden(text: str, secrets: list[str], fragments: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    text = _fragments_redacted(text, fragments)
    text = _AUTH.sub(lambda m: m.group(1) + REDACTED, text)
    return _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)


def _entity(match: re.Match[str]) -> str:
    """The character an HTML numeric character reference (``&#115;``, ``&#x73;``) stands for; a reference to no
    character (a surrogate, beyond U+10FFFF, NUL) is left as written."""
    code = int(match.group(1), 16) if match.group(1) is not None else int(match.group(2))
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else match.group(0)


def _fragments_redacted(text: str, secrets: list[str]) -> str:
    """``text`` with every run of characters that holds :data:`FRAGMENT` consecutive characters of a secret (or of
    one of its forms) in any case replaced by one :data:`REDACTED` (an endpoint may echo a key upper-cased);
    shorter secrets are matched whole only."""
    pieces = {s[i:i + FRAGMENT].lower() for s in secrets for i in range(len(s) - FRAGMENT + 1)}
    if not pieces or len(text) < FRAGMENT:
        return text
    spans: list[list[int]] = []  # [start, end) of each run to hide, overlapping matches merged
    for i in range(len(text) - FRAGMENT + 1):
        if text[i:i + FRAGMENT].lower() in pieces:
            if spans and i <= spans[-1][1]:
                spans[-1][1] = i + FRAGMENT
            else:
                spans.append([i, i + FRAGMENT])
    out, at = [], 0
    for start, end in spans:
        out += [text[at:start], REDACTED]
        at = end
    return "".join(out) + text[at:]


def retry_after_seconds(value: str | None, cap: float) -> float | None:
    """A ``Retry-After`` header as seconds in ``[0, cap]``; None when absent or unreadable."""
    if value is None:
        return None
    text = value.strip()[:64]
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.UTC)
        seconds = (when - datetime.datetime.now(datetime.UTC)).total_seconds()
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), cap)


class ReplyTooLarge(Exception):
    """The reply (or its decompressed body) is larger than ``max_reply_bytes``."""


#: How much of a reply's body is kept as it arrives, for the model a reply too large or cut short names.
KEPT_BYTES = 65536


def decode_body(chunks: Any, encoding: str, limit: int, truncate: bool = False, kept: bytearray | None = None
                ) -> bytes:
    """The reply body from raw ``chunks``, decompressed (gzip, deflate) to at most ``limit`` bytes: past it,
    :class:`ReplyTooLarge`, or with ``truncate`` its first ``limit`` bytes. ``kept`` gets the first
    :data:`KEPT_BYTES` of the body as they arrive (what a reply too large or cut short is read for)."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        decoder = None
    elif encoding in ("gzip", "x-gzip"):
        decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif encoding == "deflate":
        decoder = zlib.decompressobj()
    else:
        shown = f"'{encoding}'" if re.fullmatch(r"[a-z0-9-]{1,16}", encoding) else f"of {len(encoding)} characters"
        raise ValueError(f"unsupported content-encoding {shown}")  # a long header is never quoted: it may hold a key
    out = bytearray()
    for chunk in chunks:
        if decoder is None:
            out += chunk
        else:
            try:
                out += decoder.decompress(chunk, limit + 1 - len(out))
            except zlib.error:
                raise ValueError(f"the {encoding} body is corrupt") from None
        if kept is not None and len(kept) < KEPT_BYTES:
            kept += out[len(kept):KEPT_BYTES]
        if len(out) > limit or (decoder is not None and decoder.unconsumed_tail):
            if truncate:
                return bytes(out[:limit])
            raise ReplyTooLarge
    return bytes(out)


def parse_reply(body: bytes) -> tuple[str, Any, Any, Any]:
    """(reply text, usage, reported latency, the model it names) of a chat-completions JSON body; ValueError names
    what is wrong."""
    try:
        data = json.loads(body.decode("utf-8"))
    except RecursionError:
        raise ValueError("the reply nests too deeply") from None
    except UnicodeDecodeError:
        raise ValueError("the reply is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reply is not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ValueError(f"the reply is a JSON {type(data).__name__}, not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("the reply has no 'choices' list of objects")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise ValueError("choices[0].message is not an object")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise ValueError("choices[0].message.content is not text")
    extra = data.get("cabench")
    return (content or "", data.get("usage"), extra.get("latency_s") if isinstance(extra, dict) else None,
            data.get("model"))


def _failed_body(body: bytes, search: bool = False) -> tuple[Any, Any]:
    """The ``usage`` an error body (or a reply cabench cannot read) reports and the ``model`` it names, where it is
    a JSON object that has them; else, with ``search`` (a 200 that arrived: generated, by whichever model), the
    model its text names (:func:`_named_model`), no usage. An error page is not searched: one quoting an example
    request would name a model that answered nothing."""
    try:
        data = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        return data.get("usage"), data.get("model")
    return None, _named_model(body) if search else None


#: A ``"model": "…"`` member in a body's text (an unescaped quote before it, its value a JSON string).
_MODEL = re.compile(r'(?<!\\)"model"\s*:\s*("(?:[^"\\]|\\.){0,1000}")')


def _named_model(body: bytes) -> str | None:
    """The model a body that is no JSON object names in its text, the first ``"model": "…"`` member of its first
    :data:`KEPT_BYTES`: a stream's data lines, a byte order mark before the JSON or a second value after it (the
    model that wrote a reply is priced by it, read or not)."""
    found = _MODEL.search(body[:KEPT_BYTES].decode("utf-8", "replace"))
    if found is None:
        return None
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str) else None


class ChatClient:
    """A thread-safe client for one endpoint."""

    def __init__(self, endpoint: Endpoint, seed: int = 0) -> None:
        try:
            import httpx
        except ImportError as exc:
            raise CabenchError("live evaluation needs httpx: pip install 'cabench[live]'") from exc
        from cabench.live.deadline import deadline_transport

        self.httpx = httpx
        self.endpoint = endpoint
        self.secrets = url_secrets(endpoint.base_url)
        self.fragments: list[str] = []
        headers = {"Content-Type": "application/json", "Accept-Encoding": "gzip, deflate"}
        if endpoint.api_key_env:
            key = os.environ.get(endpoint.api_key_env)
            variable = key_variable(endpoint.api_key_env)
            if not key:
                raise CabenchError(f"endpoint.api_key_env: {variable} is not set; export it (the key is never "
                                   "written anywhere)")
            if not (key.isascii() and key.isprintable()):
                raise CabenchError(f"endpoint.api_key_env: {variable} holds characters an HTTP header cannot carry "
                                   "(non-ASCII, a newline or another control character); export the key alone")
            if key != key.strip():  # an HTTP header value cannot begin or end with one: every request would fail
                raise CabenchError(f"endpoint.api_key_env: {variable} begins or ends with a space (a key pasted "
                                   "with one?); export the key alone")
            headers["Authorization"] = f"Bearer {key}"
            if len(key) >= MIN_SECRET:
                self.secrets += [key, " ".join(key)]
            # the key's own forms, whose fragments are redacted too (a URL's query values need not be secret: a
            # date in api-version=2024-06-01 would take every date of that month with it)
            self.fragments = fragment_forms(key) if len(key) >= FRAGMENT else []
        self.secrets = sorted({form for secret in self.secrets for form in secret_forms(secret)}, key=len,
                              reverse=True)
        limits = httpx.Limits(max_connections=max(1, endpoint.concurrency) + 2)
        base, params = request_base(endpoint.base_url)
        self.client = httpx.Client(base_url=base, params=params, headers=headers, timeout=endpoint.timeout_s,
                                   transport=deadline_transport(limits))
        self.rng = random.Random(seed)
        self._rng_lock = threading.Lock()

    def close(self) -> None:
        self.client.close()

    def redact(self, text: str, unescape: bool = False) -> str:
        """``text`` with the key, the URL's userinfo and any authorization value replaced (:func:`redact`)."""
        return redact(text, self.secrets, unescape, self.fragments)

    def _attempt(self, body: dict[str, Any], outcome: Outcome) -> float | None:
        """One attempt; fills ``outcome`` and returns the server's Retry-After (seconds) if it sent one."""
        from cabench.live.deadline import deadline

        httpx = self.httpx
        start = time.perf_counter()
        limit = self.endpoint.max_reply_bytes
        answered = 0  # the status of a reply whose body is being read: a 200 cut short was generated, and is billed
        kept = bytearray()  # the start of a 200's body: the model a reply too large or cut short names is read there
        try:
            with deadline(self.endpoint.timeout_s), self.client.stream("POST", "chat/completions", json=body) as resp:
                answered = resp.status_code
                encoding = resp.headers.get("content-encoding", "")
                if resp.status_code == 200:
                    raw = decode_body(resp.iter_raw(), encoding, limit, kept=kept)
                else:
                    try:
                        raw = decode_body(_bounded(resp.iter_raw(), limit), encoding, ERROR_BODY_BYTES, truncate=True)
                    except ValueError:  # an error body cabench cannot decode: the status still says it all
                        raw = b""
                status = resp.status_code
                retry_after = resp.headers.get("Retry-After")
        except httpx.ConnectTimeout:  # no connection within the time: the request was never sent, so it is free
            outcome.attempts.append(Attempt("connection", time.perf_counter() - start, billable=False))
            outcome.error = f"could not connect within {self.endpoint.timeout_s:g} s"
            return None
        except httpx.TimeoutException:
            outcome.attempts.append(Attempt("cut short" if answered == 200 else "timeout", time.perf_counter() - start,
                                            served_model=_named_model(bytes(kept))))  # (kept: a 200's only)
            outcome.error = f"timed out after {self.endpoint.timeout_s:g} s" + (
                " reading a reply" if answered == 200 else "")
            return None
        except (httpx.ConnectError, httpx.UnsupportedProtocol) as exc:
            outcome.attempts.append(Attempt("connection", time.perf_counter() - start, billable=False))
            outcome.error = self.redact(f"{type(exc).__name__}: {exc}")[:200]
            return None
        except httpx.TransportError as exc:
            outcome.attempts.append(Attempt("cut short" if answered == 200 else "connection",
                                            time.perf_counter() - start, served_model=_named_model(bytes(kept))))
            outcome.error = self.redact(f"{type(exc).__name__}: {exc}")[:200]
            return None
        except ReplyTooLarge:
            outcome.attempts.append(Attempt("too large", time.perf_counter() - start,
                                            served_model=_named_model(bytes(kept))))
            outcome.error = f"the reply is larger than max_reply_bytes ({limit} bytes)"
            return None
        except ValueError as exc:  # an unsupported content-encoding or a corrupt compressed body
            outcome.attempts.append(Attempt("malformed", time.perf_counter() - start))
            outcome.error = self.redact(str(exc))[:200]
            return None
        seconds = time.perf_counter() - start
        if status != 200:
            usage, named = _failed_body(raw)
            outcome.attempts.append(Attempt(f"http {status}", seconds, billable=status not in FREE_STATUSES,
                                            usage=usage, served_model=named))
            outcome.error = self.redact(f"HTTP {status}: {raw.decode('utf-8', 'replace')}", unescape=True)[:200]
            return retry_after_seconds(retry_after, self.endpoint.max_backoff_s)
        try:
            reply, usage, reported, served = parse_reply(raw)
        except ValueError as exc:  # generated and billed: its usage and model, where it names them, are read
            usage, named = _failed_body(raw, search=True)
            outcome.attempts.append(Attempt("malformed", seconds, usage=usage, served_model=named))
            outcome.error = f"malformed reply: {exc}"
            outcome.ok = False
            return None
        outcome.attempts.append(Attempt("ok", seconds))
        outcome.ok = True
        outcome.reply = reply  # as the endpoint wrote it, to be scored; redacted where it is written
        outcome.usage = usage
        outcome.latency_s = seconds
        outcome.reported_latency_s = reported
        outcome.served_model = served
        return None

    def chat(self, body: dict[str, Any], admit: Callable[[], bool] = lambda: True,
             stop: threading.Event | None = None, refuse: Callable[[Attempt], str] = lambda _: "") -> Outcome:
        """POST ``chat/completions`` with retries; never raises for a failed call.

        ``admit`` is asked before each retry that follows a billable attempt: False (the budget cannot pay
        for another attempt) ends the call as failed. ``stop``, once set (the run is stopping), ends the call
        after the attempt under way: no retry, and no wait for one. ``refuse(last)`` says why no attempt may follow
        the failed attempt ``last`` (its reply named a model whose bill the call's worst case may not cover), or
        nothing.
        """
        outcome = Outcome(ok=False)
        stop = stop or threading.Event()  # never set: its wait is a plain sleep
        for attempt in range(self.endpoint.max_retries + 1):
            retry_after = self._attempt(body, outcome)
            last = outcome.attempts[-1]
            if outcome.ok or last.status in UNREAD:  # delivered: asking again pays again
                return outcome
            if last.status.startswith("http ") and int(last.status[5:]) not in RETRYABLE:
                return outcome
            if attempt == self.endpoint.max_retries:
                break
            refused = refuse(last) if last.billable else ""
            if refused:
                outcome.stopped = refused
                break
            cap = min(self.endpoint.max_backoff_s, self.endpoint.backoff_s * 2**attempt)
            with self._rng_lock:
                wait = self.rng.uniform(0, cap)  # full jitter
            if retry_after is not None:
                wait = max(wait, retry_after)
            if stop.wait(min(wait, self.endpoint.max_backoff_s)):
                outcome.stopped = "the run is stopping"
                break
            if last.billable and not admit():
                outcome.stopped = "the budget does not cover another attempt"
                break
        return outcome


def _bounded(chunks: Any, limit: int) -> Any:
    """The first ``limit`` bytes of ``chunks`` (an error body is kept only in part)."""
    taken = 0
    for chunk in chunks:
        yield chunk[:limit - taken]
        taken += len(chunk)
        if taken >= limit:
            return
