"""``cabench live`` against a hostile endpoint: the budget holds by the endpoint's own count, every attempt
ends by its deadline, every run ends with a one-line reason, and the key is written nowhere."""

from __future__ import annotations

import base64
import errno
import json
import multiprocessing
import os
import re
import shutil
import signal
import threading
from pathlib import Path
from urllib.parse import quote

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from cabench.cli import app
from cabench.jsonio import strict_loads
from cabench.live.client import Endpoint, decode_body, redact, request_base, retry_after_seconds, url_secrets
from cabench.live.journal import Journal
from tests.conftest import SAFETY_S, spread_logs, wait_for, write_dataset
from tests.live import hostile

pytest.importorskip("httpx")
RUNNER = CliRunner()
BUDGET = 3000
PROFILING_CALLS = 8  # 4 configurations x 2 instances
KEY = "sk-hostile-4f9e2c71d0"
DEADLINE_S = 1.0  # an attempt's deadline where a reply that never ends is tested; elsewhere one that ends a hang


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("data") / "four", spread_logs(4, 40, seed=5))


@pytest.fixture
def endpoint(dataset):
    started = []

    def start(behave, **options):
        ep = hostile.HostileEndpoint(dataset, behave, **options)
        server, url = hostile.start(ep)
        started.append(server)
        return ep, url
    yield start
    for server in started:
        server.shutdown()
        server.server_close()


def config(tmp_path: Path, dataset: Path, url: str, name: str = "hostile", **endpoint) -> Path:
    raw = {"name": name, "task": {"kind": "replay", "dataset": str(dataset)}, "configurations_from": str(dataset),
           "endpoint": {"base_url": url, "timeout_s": SAFETY_S, "max_retries": 1, "backoff_s": 0.001,
                        "max_backoff_s": 0.01, "concurrency": 1, "max_failures": 3, "max_reply_bytes": 65536,
                        **endpoint},
           "setting": "online", "method": "cohv-ucb", "budget_tokens": BUDGET, "profiling": {"instances": 2},
           "latency": "reported", "seed": 0}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def run(path: Path, out: Path, *extra: str):
    """``cabench live`` in a thread: a run that hangs fails the test instead of hanging it."""
    box = {}
    thread = threading.Thread(target=lambda: box.update(result=RUNNER.invoke(
        app, ["live", str(path), "--out", str(out), "--quiet", *extra])), daemon=True)
    thread.start()
    thread.join(SAFETY_S)
    assert "result" in box, "cabench live did not finish"
    return box["result"]


def finished(out: Path) -> list[dict]:
    return [r for r in map(json.loads, (out / "calls.jsonl").read_text().splitlines()) if not r.get("start")]


AFTER_PROFILING = {  # how the endpoint misbehaves once profiling is done -> words of the one-line reason
    "forbidden": "HTTP 403", "retry-after": "HTTP 429", "missing": "no token usage",
    "failed-negative": "HTTP 500", "negative": "usage.prompt_tokens is -1000", "huge": "above max_tokens",
    "inf": "is inf, not a count", "nan": "is nan, not a count", "fraction": "not a count",
    "text-usage": "usage is a JSON str",
    "list-usage": "usage is a JSON list", "choices-text": "no 'choices' list", "message-text": "message is not",
    "array": "a JSON list", "latency-text": "reported latency", "latency-negative": "reported latency",
    "latency-zero": "not a duration in seconds", "latency-missing": "reports no latency",
    "bigint": "a 400-digit number, not a count",
    "huge-prompt": "above the call's worst case", "float-prompt": "usage.prompt_tokens is 1.7e+308, not a count",
    "gzip-forbidden": "HTTP 403",
    "trickle": "timed out", "oversized": "larger than max_reply_bytes", "gzip-bomb": "larger than max_reply_bytes",
}


#: Replies whose usage costs more than the call's worst case -> the end of what the record says of it
OVERBILLED = {"huge": "above the worst case 97 tokens", "huge-prompt": "above the worst case 97 tokens"}


@pytest.mark.parametrize("how", sorted(AFTER_PROFILING))
def test_misbehaving_endpoint_never_spends_past_the_budget(tmp_path, dataset, endpoint, how):
    """Every call after profiling misbehaves: the run stops after max_failures in one line, the endpoint's
    own count stays within the budget and below what was charged, and spend.json is strict JSON."""
    ep, url = endpoint(lambda n: "honest" if n <= PROFILING_CALLS else how)
    out = tmp_path / "run"
    result = run(config(tmp_path, dataset, url, **({"timeout_s": DEADLINE_S} if how == "trickle" else {})), out)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.output
    spend = strict_loads((out / "spend.json").read_text())
    assert spend["stopped_by"] == "failures" and spend["spent_tokens"] <= BUDGET
    assert not (out / "decision.json").exists()  # the method did not end: a decision of its first pulls read as final
    assert ep.generated <= spend["spent_tokens"] <= BUDGET  # every generated token was charged
    records = finished(out)
    method = [r for r in records if r["key"].startswith("e:")]
    assert not any(r["ok"] for r in method)
    if how in OVERBILLED:  # usage costing more than the call's worst case: the provider bills it, so the first such
        # reply ends the run (concurrency 1 here: that call alone)
        assert len(method) == 1 and method[0]["overbilled"].endswith(OVERBILLED[how]), method
        assert (f"stopped: the endpoint reported usage above the worst case {method[0]['config']} on "
                f"{method[0]['instance']} was admitted at (") in lines[0] and "none was made" in lines[0], lines[0]
        return
    assert "3 calls of" in lines[0] and "failed in a row" in lines[0] and AFTER_PROFILING[how] in lines[0], lines[0]
    assert len(method) == 3
    if how.startswith("latency-"):  # believable usage, charged as reported; the outcome is not believed
        assert all(r["suspect"] and 0 < r["charged"] <= r["worst"] for r in method)
    elif how not in ("forbidden", "gzip-forbidden", "retry-after", "missing", "trickle", "oversized", "gzip-bomb"):
        # suspect: each attempt charged its worst case, never more (whatever count the endpoint reported)
        assert all(r["suspect"] and r["worst"] <= r["charged"] <= r["worst"] * len(r["attempts"]) for r in method)
    if how == "gzip-forbidden":  # a 403 whose gzip body unpacks past the kept 4 KiB is still a final 403
        assert all([a["status"] for a in r["attempts"]] == ["http 403"] for r in method)
    if how == "retry-after":
        assert all(r["charged"] == 0 for r in method) and ep.generated == spend["profiling_tokens"]
    if how == "trickle":  # each attempt ends at its deadline: the reply never ends
        assert all(a["status"] == "cut short" for r in method for a in r["attempts"])  # a 200 that never ends
        # a deadline per attempt, not per read: the client hung up while bytes still came (the whole reply but its
        # last byte takes the endpoint about 20 deadlines to trickle; a deadline per read would wait for all of it)
        attempts = sum(len(r["attempts"]) for r in method)  # the run has ended: no trickle starts after this
        wait_for(lambda: len(ep.trickled) >= ep.trickles_started, "every trickled reply to end")
        assert 0 < ep.trickles_started <= attempts
        assert all(written < size - 1 for written, size in ep.trickled), ep.trickled


def completion_config(tmp_path: Path, dataset: Path, url: str) -> Path:
    """:func:`config` with the cost in completion tokens (prompt tokens cost nothing) and BUDGET of them."""
    path = config(tmp_path, dataset, url)
    raw = yaml.safe_load(path.read_text())
    del raw["budget_tokens"]
    path.write_text(yaml.safe_dump({**raw, "cost": "completion", "budget": {"completion_tokens": BUDGET}}))
    return path


def test_calls_that_cost_nothing_end_at_the_call_limit(tmp_path, dataset, endpoint):
    """Under cost: completion, an endpoint counting no completion token after profiling made every method call free:
    the budget never ran out and the run called the endpoint without end (790 calls in 40 s). The method now makes
    at most twice the calls its budget buys at the cheapest profiling call's cost, and says so."""
    import math

    ep, url = endpoint(lambda n: "honest" if n <= PROFILING_CALLS else "no-completion")
    out = tmp_path / "run"
    result = run(completion_config(tmp_path, dataset, url), out)
    assert result.exit_code == 0, result.output
    spend = strict_loads((out / "spend.json").read_text())
    limit = math.ceil(2 * spend["method_completion_tokens"] / (spend["lambda"] * spend["c_max"]))
    assert spend["stopped_by"] == "call limit" and spend["call_limit"] == limit
    assert len([r for r in finished(out) if r["key"].startswith("e:")]) == limit == ep.requests - PROFILING_CALLS
    assert spend["spent_completion_tokens"] == spend["profiling_completion_tokens"] <= BUDGET
    assert f"stopped by the call limit ({limit} method calls, twice what the budget buys" in result.stdout


def test_a_prompt_count_above_its_bound_is_suspect_where_prompts_cost_nothing(tmp_path, dataset, endpoint):
    """Under cost: completion a prompt_tokens of 10^12 cost nothing, so the worst-case check (on the cost) believed
    it: the call was logged with 10^12 tokens, which a replay of the folder would read. Each count is now held to
    its own bound (the prompt's, the total's) whatever the tariff charges."""
    ep, url = endpoint(lambda n: "honest" if n <= PROFILING_CALLS else "huge-prompt")
    out = tmp_path / "run"
    result = run(completion_config(tmp_path, dataset, url), out)
    assert result.exit_code == 2 and "3 calls of" in result.stderr, result.output
    assert "usage.prompt_tokens 1000000000000 is far above the call's bound of " in result.stderr
    method = [r for r in finished(out) if r["key"].startswith("e:")]
    assert len(method) == 3 and all(r["suspect"] and not r["ok"] for r in method)
    logs = out / "logs.csv"
    assert not logs.exists() or max(pd.read_csv(logs)[["tokens", "prompt_tokens"]].max()) < 1e6  # none logged


def test_failed_calls_charged_as_configured(tmp_path, dataset, endpoint):
    """500s without usage: worst-case charges each billable attempt its worst case, none charges nothing."""
    spent = {}
    for mode in ("worst-case", "reported", "none"):
        ep, url = endpoint(lambda n: "honest" if n <= PROFILING_CALLS else "echo-error")
        out = tmp_path / mode
        result = run(config(tmp_path, dataset, url, name=f"charge-{mode}", charge_failed=mode), out)
        assert result.exit_code == 2 and "failed in a row" in result.stderr
        method = [r for r in finished(out) if r["key"].startswith("e:")]
        spent[mode] = sum(r["charged"] for r in method)
        per_call = [r["charged"] / r["worst"] for r in method]
        assert per_call == ([2.0] * 3 if mode == "worst-case" else [0.0] * 3)  # two attempts each
    assert spent["worst-case"] > 0 == spent["reported"] == spent["none"]


def test_key_is_written_nowhere_even_when_echoed(tmp_path, dataset, endpoint, monkeypatch):
    """Error bodies and replies that echo the Authorization header, and a key in the URL's userinfo."""
    cycle = ["honest", "echo-error", "echo-reply", "echo-usage", "honest", "honest"]
    ep, url = endpoint(lambda n: "honest" if n <= PROFILING_CALLS else cycle[n % len(cycle)])
    monkeypatch.setenv("HOSTILE_KEY", KEY)
    path = config(tmp_path, dataset, url, api_key_env="HOSTILE_KEY", max_failures=50)
    out = tmp_path / "run"
    result = run(path, out)
    assert f"Bearer {KEY}" in ep.seen_authorization  # the key was sent, and echoed back
    assert result.exit_code == 2 and "could not be believed" in result.stderr  # the echoed usage is suspect
    ep.behave = lambda n: "echo-reply"  # the key in the URL: every reply echoes the Authorization header
    userinfo_url = url.replace("http://", f"http://user:{KEY}@")
    other = config(tmp_path, dataset, url, name="userinfo", max_failures=50)
    monkeypatch.delenv("HOSTILE_KEY")
    result2 = run(other, tmp_path / "userinfo", "--base-url", userinfo_url)
    assert result2.exit_code == 0, result2.output
    assert any(a.startswith("Basic ") for a in ep.seen_authorization)
    query = config(tmp_path, dataset, f"{url}?key={KEY}#{KEY}", name="query", max_failures=50)
    sent = len(ep.seen_paths)
    result3 = run(query, tmp_path / "query")
    assert result3.exit_code == 0, result3.output
    assert set(ep.seen_paths[sent:]) == {f"/v1/chat/completions?key={KEY}"}  # the key as a query, the path whole
    for res in (result, result2, result3):
        assert KEY not in res.output and KEY not in res.stderr
    for folder in (out, tmp_path / "userinfo", tmp_path / "query"):
        for file in folder.rglob("*"):
            if file.is_file():
                assert KEY.encode() not in file.read_bytes(), file
    replies = [r.get("reply", "") + r.get("error", "") for r in finished(out)]
    assert any("[redacted]" in text for text in replies)
    provenance = yaml.safe_load((tmp_path / "userinfo" / "dataset.yaml").read_text())["provenance"]
    assert provenance["endpoint"] == url


def test_a_key_in_the_urls_path_is_recorded_and_printed_nowhere(tmp_path, dataset, endpoint, monkeypatch):
    """A gateway that takes the key in its path (https://host/KEY/v1): dataset.yaml recorded the path, key and all;
    a base URL with the key pasted after a space was taken, and every request went to /v1%20KEY/...; a bad port
    printed the path in its error. The path is recorded with the key redacted, a blank in a URL is refused without
    a call, and no error shows a path."""
    ep, url = endpoint(lambda n: "honest")
    monkeypatch.setenv("HOSTILE_KEY", KEY)
    path = config(tmp_path, dataset, url, api_key_env="HOSTILE_KEY")
    in_path = url.replace("/v1", f"/{KEY}/v1")
    result = run(path, tmp_path / "path", "--base-url", in_path)
    assert result.exit_code == 0, result.output
    assert ep.seen_paths and set(ep.seen_paths) == {f"/{KEY}/v1/chat/completions"}  # sent as written
    provenance = yaml.safe_load((tmp_path / "path" / "dataset.yaml").read_text())["provenance"]
    assert provenance["endpoint"] == url.replace("/v1", "/[redacted]/v1")
    recorded = tmp_path / "path" / "dataset.yaml"  # as an older cabench wrote it: the key in the path
    recorded.write_text(recorded.read_text().replace("[redacted]", KEY))
    again = run(path, tmp_path / "path", "--base-url", in_path)  # resumed: nothing left to call
    assert again.exit_code == 0, again.output
    provenance = yaml.safe_load(recorded.read_text())["provenance"]
    assert provenance["endpoint"] == url.replace("/v1", "/[redacted]/v1") and "endpoints" not in provenance
    sent = len(ep.seen_paths)
    pasted = run(path, tmp_path / "pasted", "--base-url", f"{url} {KEY}")
    trailing = config(tmp_path, dataset, f"{url} ", name="trailing")  # requests went to '/v1 /chat/completions'
    blank = run(trailing, tmp_path / "trailing")
    assert blank.exit_code == 2 and "holds a space or another blank" in blank.stderr, blank.output
    port = run(path, tmp_path / "port", "--base-url", f"http://127.0.0.1:0/{KEY}/v1")
    for refused in (pasted, port):
        assert refused.exit_code == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.output
    assert "holds a space or another blank" in pasted.stderr and "(http://127.0.0.1/...)" in port.stderr
    assert len(ep.seen_paths) == sent  # no call made
    for res in (result, pasted, port):
        assert KEY not in res.output and KEY not in res.stderr
    for file in tmp_path.rglob("*"):
        if file.is_file():
            assert KEY.encode() not in file.read_bytes(), file


@pytest.mark.parametrize("key, said", [("sk-SECR\u00c9T-0001", "holds characters an HTTP header cannot carry"),
                                       ("sk-SECRET-0001\nX: y", "holds characters an HTTP header cannot carry"),
                                       ("sk-SECRET-0001 ", "begins or ends with a space"),
                                       (" sk-SECRET-0001", "begins or ends with a space")])
def test_a_key_a_header_cannot_carry_is_refused_in_one_line_without_showing_it(tmp_path, dataset, monkeypatch, key,
                                                                               said):
    """A key pasted with a space at its end was sent nowhere (the HTTP library refuses such a header before any
    request), yet every attempt and retry was charged its worst case: 80% of a budget, then "fix the endpoint"."""
    monkeypatch.setenv("HOSTILE_KEY", key)
    path = config(tmp_path, dataset, "http://127.0.0.1:9/v1", api_key_env="HOSTILE_KEY")
    result = run(path, tmp_path / "run")
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.output
    assert f"HOSTILE_KEY {said}" in result.stderr
    assert "SECR" not in result.output


def test_a_placeholder_key_too_short_to_be_a_secret_leaves_replies_as_written(monkeypatch):
    """A local server's placeholder key ('2', 'x') was replaced in every reply before the reply was scored, so '12'
    was read as '1[redacted]' and scored wrong; keys under four characters are sent but not taken for secrets, and
    a reply is scored as the endpoint wrote it (redacted only where it is written)."""
    from cabench.live.client import MIN_SECRET, ChatClient

    monkeypatch.setenv("SHORT_KEY", "2")
    monkeypatch.setenv("LONG_KEY", "sk-1234")
    short = ChatClient(Endpoint(base_url="http://127.0.0.1:9/v1", api_key_env="SHORT_KEY"))
    long = ChatClient(Endpoint(base_url="http://127.0.0.1:9/v1", api_key_env="LONG_KEY"))
    try:
        assert MIN_SECRET == 4 and short.client.headers["Authorization"] == "Bearer 2"
        assert short.redact("12 and 22") == "12 and 22" and long.redact("key sk-1234") == "key [redacted]"
    finally:
        short.close()
        long.close()


def test_a_served_model_name_is_redacted_before_it_is_cut(monkeypatch):
    """A reply's model name was cut to 200 characters, then redacted: the key starting at character 195 left its
    first five characters in calls.jsonl, too few to be known as the key's. It is redacted first, then cut."""
    from types import SimpleNamespace

    from cabench.live.caller import Caller
    from cabench.live.client import ChatClient

    key = "sk-live-ABCDEFGHIJKLMNOPQRSTUV0123456789"
    monkeypatch.setenv("MODEL_KEY", key)
    client = ChatClient(Endpoint(base_url="http://127.0.0.1:9/v1", api_key_env="MODEL_KEY"))
    try:
        for at in (0, 150, 192, 195, 199):
            shown = Caller._shown_model(SimpleNamespace(client=client), "m" * at + key + "-tail")
            assert len(shown) == min(200, at + len("[redacted]-tail")) and shown[:at] == "m" * at, (at, shown)
            assert not set(shown[at:]) & set("sk-liveABCDEFGHIJKLMNOPQRSTUV0123456789") - set("[redacted]-tail"), (
                at, shown)
            assert shown[at:].startswith("[redacted]"[:200 - at]), (at, shown)
        # keys shrink to their mark when redacted: one cut before it could leave a piece that moves into view
        for at in (33, 40, 393):
            shown = Caller._shown_model(SimpleNamespace(client=client), "m" * at + key * 10)
            assert key[:3] not in shown and shown == ("m" * at + "[redacted]" * 10)[:200], (at, shown)
    finally:
        client.close()


def test_an_environment_key_echoed_escaped_encoded_or_in_base64_is_redacted(monkeypatch):
    """An endpoint echoed the key with JSON's escaped slash ('sk-a\\/b', as PHP writes it), percent-encoded, or in
    base64, and each was written to calls.jsonl and spend.json as it came, giving the key back. Every such form is
    redacted now; text that merely resembles one is kept."""
    from cabench.live.client import ChatClient

    key = "sk-adv+KEY/abc=def/1234567890xyz"
    monkeypatch.setenv("SLASH_KEY", key)
    client = ChatClient(Endpoint(base_url="http://127.0.0.1:9/v1", api_key_env="SLASH_KEY"))
    try:
        body = '{"error": {"message": "Incorrect API key provided: ' + key.replace("/", "\\/") + '"}}'
        assert client.redact(body, unescape=True) == '{"error": {"message": "Incorrect API key provided: [redacted]"}}'
        raw = key.encode()
        for form in (quote(key, safe=""), quote(key, safe="/"), base64.b64encode(raw).decode(),
                     base64.urlsafe_b64encode(raw).decode(), base64.b64encode(raw).decode().rstrip("=")):
            assert form != key and client.redact(f"echo {form} end") == "echo [redacted] end", form
        assert client.redact("a\\/b and sk-adv+") == "a\\/b and sk-adv+"  # under 8 characters of it: kept
        # cut short, or percent-encoded in lower case (%2f is %2F): each gave the key back as it came
        for echoed in (key[:-1], key[1:], key[:12], quote(key, safe="").lower().replace("key", "KEY"),
                       quote(key, safe="")[:-3], base64.b64encode(raw).decode()[:-4],
                       key.upper(), key.lower()):  # a key echoed in another case: "SK-ADV+[redacted]..." before
            assert client.redact(f"provided: {echoed}.") == "provided: [redacted].", echoed
    finally:
        client.close()


def test_a_key_echoed_inside_other_base64_as_html_references_in_hex_or_backwards_is_redacted(monkeypatch):
    """base64 of "Bearer KEY", "user:KEY" or a JSON document holding the key gave it back whole: the key's own
    base64 matched only where the key began a 3-byte group. An HTML error page's character references (&#115;...)
    kept 30 of its 33 characters, and its hexadecimal or backward form all of them; so did every byte
    percent-encoded, base32 and zero-width characters between the key's. Each is redacted now, leaving at most the
    characters a base64 group shares with the text before or after the key; text merely holding character
    references or invisible characters is kept as written."""
    from cabench.live.client import ChatClient

    key = "sk-proj-ABCdef1234567890SECRETxyz"
    monkeypatch.setenv("ECHO_KEY", key)
    client = ChatClient(Endpoint(base_url="http://127.0.0.1:9/v1", api_key_env="ECHO_KEY"))
    try:
        raw = key.encode()
        for prefix in (b"Bearer ", b"user:", b'{"sub": "u1", "key": "', b"", b"x", b"xy"):
            for encode in (base64.b64encode, base64.urlsafe_b64encode):
                echoed = encode(prefix + raw + b'"}').decode()
                shown = client.redact(f"echo {echoed} end")
                assert "[redacted]" in shown, (prefix, echoed)
                left = shown.removeprefix("echo ").removesuffix(" end").split("[redacted]")
                decoded = b"".join(base64.b64decode(part + "=" * (-len(part) % 4), altchars=b"-_")[:len(part) * 3 // 4]
                                   for part in left if len(part) >= 4)
                assert raw[2:10] not in decoded and raw[-10:-2] not in decoded, (prefix, shown)
        for form in ("".join(f"&#{ord(c)};" for c in key), "".join(f"&#x{ord(c):X};" for c in key),
                     "".join(f"&#{ord(c)}" for c in key), raw.hex(), raw.hex().upper(), key[::-1], " ".join(key)):
            assert client.redact(f"<p>key: {form}</p>") == "<p>key: [redacted]</p>", form
        # every byte percent-encoded, base32, or zero-width characters between the key's: each gave it back whole
        for form in ("".join(f"%{b:02X}" for b in raw), "".join(f"%{b:02x}" for b in raw),
                     base64.b32encode(raw).decode(), base64.b32encode(raw).decode().rstrip("="), "\u200b".join(key),
                     "\u2060".join(key), "\u00ad".join(key)):
            assert client.redact(f"<p>key: {form}</p>") == "<p>key: [redacted]</p>", form
        assert client.redact("a &amp; b &#9; &#0; &#xD800; c") == "a &amp; b &#9; &#0; &#xD800; c"
        assert client.redact("answer: 1 2 3 4 5 6") == "answer: 1 2 3 4 5 6"  # a few key characters spaced: kept
        assert client.redact("a\u200bb, c\u00add") == "a\u200bb, c\u00add"  # invisible characters hiding nothing
        start = "".join(f"%{b:02X}" for b in raw[:5])  # "sk-pr": the percent-encoded start of many a key, kept
        assert client.redact(f"path {start} ok") == f"path {start} ok"
    finally:
        client.close()


def test_a_key_in_the_url_is_sent_as_written_and_redacted_in_every_form():
    url = "http://alice:S3cr%40tPASS@127.0.0.1:9/v1/?api-key=QK%2BSECRETVAL&x=1#frag-ment"
    assert request_base(url) == ("http://alice:S3cr%40tPASS@127.0.0.1:9/v1/", "api-key=QK%2BSECRETVAL&x=1")
    secrets = url_secrets(url)
    basic = base64.b64encode(b"alice:S3cr@tPASS").decode()  # the credential the client sends, echoed bare
    for form in ("S3cr%40tPASS", "S3cr@tPASS", "QK%2BSECRETVAL", "QK+SECRETVAL", "alice:S3cr%40tPASS", "frag-ment",
                 basic):
        assert form in secrets
    assert redact(f"cred {basic}", secrets) == "cred [redacted]"
    echoed = "userpass=alice:S3cr@tPASS, query api-key=QK%2BSECRETVAL or QK+SECRETVAL"
    assert redact(echoed, secrets) == "userpass=[redacted], query api-key=[redacted] or [redacted]"
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY)  # a JSON error body may write the key escaped
    assert redact(f'{{"error": "bad key {escaped}"}}', [KEY], unescape=True) == '{"error": "bad key [redacted]"}'
    assert redact("\\ud83d\\ude00 kept", [], unescape=True) == "\\ud83d\\ude00 kept"  # never half a surrogate pair
    # a key holding a quote or a backslash, echoed by json.dumps: written \" and \\, it leaked whole (or in pieces)
    for key in ('pr"Ab12C"d34Ef5"Gh67I"j89', "tok\\Ab12C\\d34Ef5Gh67", 'q\\"uote/sla\\sh-0123456789'):
        body = json.dumps({"error": {"message": f"Incorrect API key provided: {key}; Authorization: Bearer {key}"}})
        assert redact(body, [key], unescape=True) == (
            '{"error": {"message": "Incorrect API key provided: [redacted]; Authorization: [redacted]"}}'), body
    assert redact("a\\nb \\\\u0041", [], unescape=True) == "a\\nb \\u0041"  # one line; a backslash, then u0041
    with pytest.raises(ValueError, match=r"unsupported content-encoding of 40 characters$"):
        decode_body([b""], "x-sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZabcd", 100)
    with pytest.raises(ValueError, match=r"unsupported content-encoding 'br'$"):
        decode_body([b""], "br", 100)


def test_redaction_and_retry_after_parsing():
    assert redact("Authorization: Bearer sk-abc123456 and key sk-xyz", ["sk-xyz"]) == \
        "Authorization: [redacted] and key [redacted]"
    assert redact('{"headers": {"authorization": "Basic dXNlcjpwYXNz"}}', []) == \
        '{"headers": {"authorization": "[redacted]"}}'
    assert retry_after_seconds("100000", 30.0) == 30.0
    assert retry_after_seconds("inf", 30.0) == 30.0
    assert retry_after_seconds("-5", 30.0) == 0.0
    assert retry_after_seconds("nan", 30.0) is None and retry_after_seconds("soon", 30.0) is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", 30.0) == 0.0  # a date in the past
    assert retry_after_seconds("Fri, 01 Jan 9999 00:00:00 GMT", 30.0) == 30.0


@pytest.mark.parametrize("line, words", [
    (b"[1, 2]\n", "is a JSON list"), (b'{"ok": true}\n', "has no text 'key'"),
    (b'{"key": "e:1", "config": "a", "instance": "q", "ok": true, "charged": NaN}\n', "not JSON"),
    (b'{"key": "../x", "config": "a", "instance": "q", "ok": true}\n', "not one cabench writes"),
    (b'{"key": "e:1", "config": "a", "instance": "q", "ok": false, "charged": -5}\n', "not a number of 0 or more"),
    (b'{"key": "e:1", "start": true, "config": "a", "instance": "q"}\n', "'worst'"),
    (b'{"key": "e:1", "config": "a", "instance": "q", "ok": true, "correct": 1}\n', "no text 'model'"),
    (b'{"key": "e:1", "config": "a", "instance": "q", "ok": false, "charged": 1' + b"0" * 400 + b'}\n',
     "not a number of 0 or more"),
    (b'{"key": "e:1", "config": "a", "instance": "q", "ok": false, "attempts": [1, 2]}\n', "list of objects"),
])
def test_hand_edited_journal_lines_are_one_line(tmp_path, line, words):
    (tmp_path / "calls.jsonl").write_bytes(line + b'{"key": "e:2", "config": "a", "instance": "q", "ok": true}\n')
    with pytest.raises(Exception) as info:
        Journal(tmp_path)
    assert type(info.value).__name__ == "CabenchError" and "line 1" in str(info.value) and words in str(info.value)


def test_cut_last_line_is_dropped_and_its_attempt_charged(tmp_path):
    """A kill mid-write leaves a cut line: it is dropped (the next record starts on its own line), and the
    attempt it started is charged its worst case and made again."""
    start = b'{"key": "e:0", "start": true, "config": "a", "instance": "q", "worst": 90.0}\n'
    done = (b'{"key": "e:0", "config": "a", "instance": "q", "ok": true, "charged": 40.0, "tokens": 40.0, '
            b'"model": "m", "prompting": "direct", "temperature": 0.0, "max_tokens": 64, "correct": 1.0, '
            b'"latency_s": 0.5}\n')
    (tmp_path / "calls.jsonl").write_bytes(start + done + start.replace(b"e:0", b"e:1") + b'{"key": "e:1", "con')
    journal = Journal(tmp_path)
    journal.close()
    assert journal.done["e:0"]["ok"] and journal.done["e:1"]["lost"] and journal.charges == {"e:0": 40.0, "e:1": 90.0}
    lines = (tmp_path / "calls.jsonl").read_bytes().splitlines()
    assert all(json.loads(x) for x in lines) and len(lines) == 4  # cut line gone, lost record appended
    assert Journal(tmp_path).total_charged() == 130.0  # read again: the same charges, nothing added


def test_a_full_disk_while_resuming_adds_the_journal_newline_names_the_journal(tmp_path, dataset, endpoint,
                                                                                  monkeypatch):
    """Resuming a run whose journal's last record lacks its newline writes the newline first: on a full disk that
    write's error names ``calls.jsonl`` (a failed write names no file of its own), one line, exit 2, nothing
    changed; once there is room the resume adds the newline and finishes."""
    ep, url = endpoint(lambda n: "honest")
    path, out = config(tmp_path, dataset, url), tmp_path / "run"
    assert run(path, out).exit_code == 0
    journal = out / "calls.jsonl"
    journal.write_bytes(journal.read_bytes().removesuffix(b"\n"))  # as if killed before the newline
    before = journal.read_bytes()
    write = os.write

    def full(fd, data):
        if os.readlink(f"/proc/self/fd/{fd}") == str(journal):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return write(fd, data)
    monkeypatch.setattr(os, "write", full)
    result = run(path, out)
    monkeypatch.undo()
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [f"error: {journal}: No space left on device; nothing already written was "
                                          "changed (check the path, its permissions and free space)"]
    assert journal.read_bytes() == before
    assert run(path, out).exit_code == 0
    assert journal.read_bytes().startswith(before + b"\n")


def test_damaged_live_json_is_one_line(tmp_path, dataset, endpoint):
    ep, url = endpoint(lambda n: "honest")
    out = tmp_path / "run"
    out.mkdir()
    (out / "live.json").write_text('{"name": "hos')
    result = run(config(tmp_path, dataset, url), out)
    assert result.exit_code == 2 and "live.json: damaged" in result.stderr and ep.requests == 0


def _child(path: str, out: str) -> None:  # a forked process: the run a kill -9 interrupts
    from cabench.errors import CabenchError
    from cabench.live.config import load_live
    from cabench.live.session import run_session

    try:
        run_session(load_live(path), Path(out), quiet=True)
    except CabenchError:
        pass


@pytest.mark.slow
def test_kill_9_five_times_against_a_hostile_endpoint(tmp_path, dataset, endpoint):
    """Negative, non-finite and missing usage, 403s, 429s with Retry-After 100000 and trickled replies, and
    five kill -9 mid-run, each while a call is in flight (the endpoint stops the run's process when a request
    arrives: a state, not a time): the tokens the endpoint generated never exceed the budget, nor what was
    charged. Usage billed above the worst case is left out: it stops every later call in the folder (tested on
    its own), so whether the later rounds make calls would depend on which of two concurrent calls got it."""
    ep, url = endpoint(hostile.mixed(seed=3, honest_share=0.7, honest_first=12, leave_out=("huge",)))
    path = config(tmp_path, dataset, url, concurrency=2, max_failures=6, max_retries=2, timeout_s=DEADLINE_S)
    out = tmp_path / "run"
    fork = multiprocessing.get_context("fork")
    kills = 0
    for round_ in range(5):
        ep.stop.arm(ep.requests + 2 + round_)
        child = fork.Process(target=_child, args=(str(path), str(out)))
        child.start()
        ep.stop.started(child.pid)
        wait_for(ep.stop.stopped.is_set, "the endpoint to stop the run", child)
        if ep.stop.stopped.is_set():
            os.kill(child.pid, signal.SIGKILL)
            kills += 1
        child.join()
        assert ep.generated <= BUDGET
    ep.stop.arm(None)
    result = run(path, out)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code in (0, 2) and len(lines) <= 1, result.output
    spend = strict_loads((out / "spend.json").read_text())
    assert kills >= 3 and spend["lost_calls"] >= kills  # each kill left the call it was making
    assert ep.generated <= spend["spent_tokens"] <= BUDGET
    if result.exit_code == 2:
        reasons = ("could not be believed", "failed in a row", "profiling calls failed")
        assert any(words in lines[0] for words in reasons), lines[0]
    print(f"kill -9 x{kills}: endpoint generated {ep.generated}, charged {spend['spent_tokens']:.0f} of {BUDGET}")


def test_collect_with_failed_calls_exits_non_zero(tmp_path, dataset, endpoint):
    """``collect`` whose calls fail says so in one line (exit 2) instead of reporting success."""
    ep, url = endpoint(lambda n: "honest" if n % 2 else "forbidden")
    path = config(tmp_path, dataset, url, name="grid", max_failures=100)
    raw = yaml.safe_load(path.read_text())
    for key in ("setting", "method", "budget_tokens"):
        raw.pop(key)
    raw["evaluation"] = {"instances": 3}
    raw["profiling"] = {"instances": 0}
    path.write_text(yaml.safe_dump(raw))
    result = RUNNER.invoke(app, ["collect", str(path), "--out", str(tmp_path / "grid"), "--quiet"])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and "6 of 12 calls failed" in lines[0], result.output
    assert len(finished(tmp_path / "grid")) == 12 and ep.requests == 12


def _psi(tmp_path: Path, dataset: Path, url: str, name: str, budget: int, method: str = "copsi") -> Path:
    path = config(tmp_path, dataset, url, name=name, concurrency=4, max_failures=5)
    raw = yaml.safe_load(path.read_text())
    raw.update({"setting": "psi", "method": method, "budget_tokens": budget, "latency": "measured",
                "cost_mode": "stochastic" if method == "uniform" else "deterministic"})  # Uniform: to the last token
    path.write_text(yaml.safe_dump(raw))
    return path


def test_psi_with_a_failed_call_and_concurrency_resumes(tmp_path, dataset, endpoint):
    """A failed call retracted while four calls are in flight: the asks and tells follow the ask order, not
    the timing, so re-running the finished run asks the same calls and makes none."""
    ep, url = endpoint(lambda n: "forbidden" if n == PROFILING_CALLS + 7 else "honest")
    path = _psi(tmp_path, dataset, url, "psi-fail", 8000)
    first = run(path, tmp_path / "run")
    assert first.exit_code == 0, first.output
    made = ep.requests
    again = run(path, tmp_path / "run")
    assert again.exit_code == 0, again.output
    assert ep.requests == made and strict_loads((tmp_path / "run" / "decision.json").read_text())["pareto_set"]


def test_resume_counts_every_journaled_charge_before_new_calls(tmp_path, dataset, endpoint):
    """A call lost to a kill is made again only against the whole journaled spend: resuming a run whose
    second-to-last call was lost stays within the budget by the endpoint's own count."""
    ep, url = endpoint(lambda n: "honest")
    budget = 3000
    path = _psi(tmp_path, dataset, url, "psi-lost", budget, "uniform")  # Uniform spends to the budget
    out = tmp_path / "run"
    assert run(path, out).exit_code == 0
    lines = (out / "calls.jsonl").read_text().splitlines()
    method = [i for i, line in enumerate(lines) if '"e:' in line and '"start"' not in line]
    del lines[method[-2]]  # as if killed while that call was in flight
    (out / "calls.jsonl").write_text("\n".join(lines) + "\n")
    result = run(path, out)
    assert result.exit_code == 0, result.output
    spend = strict_loads((out / "spend.json").read_text())
    assert spend["lost_calls"] == 1 and spend["stopped_by"] == "token budget" and spend["spent_tokens"] <= budget
    assert ep.generated <= spend["spent_tokens"] <= budget  # both runs: the lost call was generated twice


def test_a_stopping_run_makes_no_further_attempt_of_a_call_in_flight(monkeypatch):
    """Once a run stops (Ctrl-C), each call in flight ended only after all its retries, with backoff (about 17 minutes
    at the defaults, each retry billable) while further interrupts were held off. The stop is a flag each call checks
    after the attempt under way: one attempt, then no retry and no wait."""
    import threading

    from cabench.live.client import Attempt, ChatClient

    attempts = []

    def unavailable(self, body, outcome):
        attempts.append(1)
        outcome.attempts.append(Attempt(status="http 503", seconds=0.0, billable=True))
        return 60.0  # Retry-After: a minute

    monkeypatch.setattr(ChatClient, "_attempt", unavailable)
    client = ChatClient(Endpoint(base_url="http://127.0.0.1:9/v1", max_retries=4, backoff_s=0.0,
                                 max_backoff_s=0.0))
    try:
        assert len(client.chat({}).attempts) == 5 and len(attempts) == 5  # unstopped: every retry
        attempts.clear()
        stop = threading.Event()
        stop.set()
        outcome = client.chat({}, stop=stop)
        assert len(attempts) == 1 and outcome.stopped == "the run is stopping" and not outcome.ok
    finally:
        client.close()


def test_a_count_a_little_above_its_bound_is_believed_one_far_above_is_not():
    """A provider may add tokens the request does not show (a default system prompt): a prompt of 25 tokens against
    a bound of 19 was made suspect, and the run stopped. A count is held to twice its bound plus 1,024."""
    from cabench.live.charges import usage_counts
    from cabench.live.tariff import Tariff
    from cabench.live.tasks import Bound

    bound, rate = Bound(19.0, 64.0, 83.0), Tariff("tokens", 1.0, 1.0)
    worst = rate.worst(bound)
    assert usage_counts({"prompt_tokens": 25, "completion_tokens": 5}, 64, worst, rate, bound) == ((25, 5), "", (25, 5))
    free_prompts = Tariff("completion_tokens", 0.0, 1.0)
    counts, why, charged = usage_counts({"prompt_tokens": 1063, "completion_tokens": 5}, 64,
                                        free_prompts.worst(bound), free_prompts, bound)
    assert counts is None and why.startswith("usage.prompt_tokens 1063 is far above the call's bound of 19 tokens")
    assert usage_counts({"prompt_tokens": 1062, "completion_tokens": 5}, 64, free_prompts.worst(bound), free_prompts,
                        bound)[0] == (1062, 5)  # 2 x 19 + 1,024


def test_a_budget_profiling_cannot_start_in_says_why(tmp_path, dataset, endpoint):
    """Two stops of profiling said only "the budget does not cover profiling ... raise the budget ... or lower
    profiling.instances": a budget below one call's worst case ("0 profiling calls cost 0 tokens"), where no
    number of instances helps, and a budget run out by the charges of calls that all failed (every one refused:
    a wrong key), where raising it pays the same endpoint again. Each now says which."""
    _, url = endpoint(lambda n: "honest")
    raw = yaml.safe_load(config(tmp_path, dataset, url).read_text())
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump({**raw, "budget_tokens": 5}))
    tiny = run(tmp_path / "tiny.yaml", tmp_path / "tiny")
    lines = tiny.stderr.strip().splitlines()
    assert tiny.exit_code == 2 and len(lines) == 1, tiny.output
    assert re.search(r"tiny\.yaml: a call of \S+ may cost up to [\d,]+ tokens \(its prompt's bound and its max_tokens "
                     r"at its tokens\), more than the whole budget of 5 tokens: no call of it can start; raise the "
                     r"budget well above that, or lower its max_tokens$", lines[0]), lines[0]
    calls = tmp_path / "tiny" / "calls.jsonl"
    assert not calls.exists() or not calls.read_text().strip()  # said before any call: nothing paid
    worst = float(re.search(r"may cost up to ([\d,]+) tokens", lines[0])[1].replace(",", ""))
    given = {k: v for k, v in raw.items() if k != "budget_tokens"}
    (tmp_path / "near.yaml").write_text(yaml.safe_dump({**given, "budget": {"tokens": worst - 0.4}}))
    near = run(tmp_path / "near.yaml", tmp_path / "near")  # said "up to 97 tokens, more than ... 97 tokens"
    assert near.exit_code == 2 and (f"may cost up to {worst:,.0f} tokens (" in near.stderr
                                    and f"the whole budget of {worst - 0.4:,.6g} tokens: " in near.stderr), near.stderr
    _, refusing = endpoint(lambda n: "forbidden")
    raw = yaml.safe_load(config(tmp_path, dataset, refusing, name="refused", max_failures=50).read_text())
    (tmp_path / "refused.yaml").write_text(yaml.safe_dump({**raw, "budget_tokens": 400}))
    refused = run(tmp_path / "refused.yaml", tmp_path / "refused")
    lines = refused.stderr.strip().splitlines()
    assert refused.exit_code == 2 and len(lines) == 1, refused.output
    made = [r for r in finished(tmp_path / "refused")]
    assert made and not any(r["ok"] for r in made)
    assert (f"refused.yaml: every one of the {len(made)} profiling calls made failed (e.g. " in lines[0]
            and "HTTP 403" in lines[0] and "failed attempts as endpoint.charge_failed: worst-case says, replies "
            "without a usage count at their worst case) left too little of the budget for the next; fix the endpoint "
            "(or the key)" in lines[0]), lines[0]


def test_usage_billed_above_the_worst_case_is_marked_as_each_charge_failed_mode_bills_it():
    """A reply whose usage costs more than the call's worst case is marked overbilled (the run then makes no further
    call), and so is a failed attempt's, except under charge_failed: none, which declares failed attempts unbilled."""
    from cabench.live.charges import charge
    from cabench.live.client import Attempt, Outcome
    from cabench.live.tariff import Tariff
    from cabench.live.tasks import Bound

    rate = Tariff("tokens", 1.0, 1.0)
    worst = rate.worst(Bound(19.0, 64.0, 83.0))
    over, fair = {"prompt_tokens": 40, "completion_tokens": 64}, {"prompt_tokens": 10, "completion_tokens": 5}
    failed = Outcome(False, error="HTTP 500", attempts=[Attempt("http 500", 0.1, True, over)])
    for mode, marked in (("worst-case", True), ("reported", True), ("none", False)):
        paid, _ = charge(failed, 64, worst, rate, mode)
        assert bool(paid.overbilled) == marked, mode
    answered = Outcome(True, reply="4", usage=over, attempts=[Attempt("ok", 0.1)])
    paid, _ = charge(answered, 64, worst, rate, "none")
    assert paid.overbilled == "40 prompt and 64 completion tokens reported, 104 tokens, above the worst case 83 tokens"
    honest = Outcome(True, reply="4", usage=fair, attempts=[Attempt("ok", 0.1)])
    assert charge(honest, 64, worst, rate, "worst-case")[0].overbilled == ""


def test_a_reply_delivered_without_usage_is_charged_its_worst_case_whatever_charge_failed_says():
    """charge_failed says how failed attempts are charged; a reply delivered without a usage count was generated and
    is billed: under none or reported it was charged nothing, and an endpoint leaving usage out of every other reply
    generated 1,630 tokens against a budget of 1,000. A failed attempt before it is still charged as the mode says."""
    from cabench.live.charges import NOTHING, charge
    from cabench.live.client import Attempt, Outcome
    from cabench.live.tariff import Tariff
    from cabench.live.tasks import Bound

    rate = Tariff("tokens", 1.0, 1.0)
    worst = rate.worst(Bound(19.0, 64.0, 83.0))
    for mode in ("worst-case", "reported", "none"):
        silent = Outcome(True, reply="4", usage=None, attempts=[Attempt("http 500", 0.1, True), Attempt("ok", 0.1)])
        paid, _ = charge(silent, 64, worst, rate, mode)
        assert paid.usage is None and paid.charged[-1] == worst, mode
        assert paid.charged[0] == (worst if mode == "worst-case" else NOTHING), mode


@pytest.mark.parametrize("mode", ["none", "reported"])
def test_replies_without_usage_now_and_then_never_spend_past_the_budget(tmp_path, dataset, endpoint, mode):
    """Every other reply after profiling comes without usage (never three in a row, so the run goes on): the endpoint
    generates no more than was charged, within the budget, and the summary counts those calls."""
    ep, url = endpoint(lambda n: "honest" if n <= PROFILING_CALLS or n % 2 else "missing")
    out = tmp_path / "run"
    result = run(config(tmp_path, dataset, url, charge_failed=mode), out)
    assert result.exit_code == 0, result.output
    spend = strict_loads((out / "spend.json").read_text())
    assert ep.generated <= spend["spent_tokens"] <= BUDGET and spend["failed_calls"] > 3
    made = len(finished(out))  # every call the journal finished, with an outcome or without
    assert made == spend["calls"] + spend["failed_calls"] == ep.requests
    assert f" in {made} calls ({spend['failed_calls']} without an outcome), 0 failed attempts; " in result.stdout


@pytest.mark.parametrize("how", ["hidden-reasoning", "hidden-in-total"])
def test_tokens_a_reply_counts_only_in_its_total_or_reasoning_are_charged(tmp_path, dataset, endpoint, how):
    """Gateways passing a thinking model through have reported its reasoning tokens in completion_tokens_details or
    in total_tokens alone, with a completion of 1: cabench charged prompt + 1 a call, and the endpoint generated
    (and a provider bills) far past the budget. The completion is read as the most the usage counts."""
    ep, url = endpoint(lambda n: "honest" if n <= PROFILING_CALLS else how)
    out = tmp_path / "run"
    result = run(config(tmp_path, dataset, url), out)
    assert result.exit_code == 0, result.output
    spend = strict_loads((out / "spend.json").read_text())
    assert spend["stopped_by"] == "token budget"
    assert ep.generated <= spend["spent_tokens"] <= BUDGET, (ep.generated, spend)
    method = [r for r in finished(out) if r["key"].startswith("e:")]
    assert method and all(r["ok"] and not r.get("suspect") and r["completion_tokens"] > 1 for r in method)


def test_a_usage_is_read_as_the_most_its_counts_say_was_generated():
    """completion_tokens, total_tokens less the prompt, and the reasoning tokens of completion_tokens_details: the
    most of them is the completion charged; an honest usage reads as it is, and a total far above the call's
    bound makes the call suspect."""
    from cabench.live.charges import billed_above, usage_counts
    from cabench.live.tariff import Tariff
    from cabench.live.tasks import Bound

    bound, rate = Bound(19.0, 64.0, 83.0), Tariff("tokens", 1.0, 1.0)
    worst = rate.worst(bound)
    honest = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
              "completion_tokens_details": {"reasoning_tokens": 3}}
    assert usage_counts(honest, 64, worst, rate, bound) == ((10, 5), "", (10, 5))
    hidden = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 42}
    assert usage_counts(hidden, 64, worst, rate, bound) == ((10, 32), "", (10, 32))
    thought = {"prompt_tokens": 10, "completion_tokens": 1, "completion_tokens_details": {"reasoning_tokens": 40}}
    assert usage_counts(thought, 64, worst, rate, bound) == ((10, 41), "", (10, 41))  # 40 the completion cannot hold
    odd = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": "many", "completion_tokens_details": [1]}
    assert usage_counts(odd, 64, worst, rate, bound) == ((10, 5), "", (10, 5))
    far = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 5015}
    counts, why, charged = usage_counts(far, 64, worst, rate, bound)
    assert counts is None and charged == worst
    assert why == "the usage's completion (its total or reasoning tokens) 5005 is above max_tokens 64"
    assert billed_above(far, worst, rate)[1] == 5015  # and the run is stopped: a provider bills it


@pytest.mark.parametrize("how", ["array", "oversized", "cut"])
@pytest.mark.parametrize("mode", ["none", "reported"])
def test_replies_delivered_but_unread_are_charged_whatever_charge_failed_says(tmp_path, dataset, endpoint, mode, how):
    """A 200 whose body cabench cannot read (no reply; larger than max_reply_bytes; cut off) was charged as a failed
    attempt:
    nothing under none or reported, so an endpoint answering every other call so generated 5,650 tokens against a
    budget of 3,000. It was generated and is billed: each is charged its worst case (and not asked again)."""
    ep, url = endpoint(lambda n: "honest" if n <= PROFILING_CALLS or n % 2 else how)
    out = tmp_path / "run"
    result = run(config(tmp_path, dataset, url, charge_failed=mode), out)
    assert result.exit_code in (0, 2), result.output
    spend = strict_loads((out / "spend.json").read_text())
    assert ep.generated <= spend["spent_tokens"] <= BUDGET, (ep.generated, spend)
    unread = [r for r in finished(out) if r["key"].startswith("e:") and not r["ok"]]
    assert unread and all(len(r["attempts"]) == 1 and r["charged"] == r["worst"] for r in unread), unread


def test_fragments_are_redacted_for_the_key_alone(monkeypatch):
    """A URL's query values are redacted whole, not by fragment (api-version=2024-06-01 made every date of that
    month '[redacted]15' in what was written); the key's fragments are."""
    from cabench.live.client import ChatClient

    monkeypatch.setenv("FRAG_KEY", "sk-proj-AbCdEfGhIjKlMnOp")
    client = ChatClient(Endpoint(base_url="http://127.0.0.1:9/v1?api-version=2024-06-01", api_key_env="FRAG_KEY"))
    try:
        assert client.redact("on 2024-06-15 and 2024-06-01") == "on 2024-06-15 and [redacted]"
        assert client.redact("key sk-proj-AbCdEfGh...") == "key [redacted]..."
    finally:
        client.close()


def test_a_reply_billed_above_its_worst_case_is_the_stop_said_first(tmp_path, dataset, endpoint):
    """With endpoint.max_failures 1, the first overbilled reply also ended a run of failures: spend.json's reason
    named the failures only, and the overbilling was in calls.jsonl alone. The overbilling is said first."""
    _, url = endpoint(lambda n: "honest" if n <= PROFILING_CALLS else "huge")
    out = tmp_path / "run"
    result = run(config(tmp_path, dataset, url, max_failures=1), out)
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.output
    spend = strict_loads((out / "spend.json").read_text())
    assert spend["stop_reason"].startswith("the endpoint reported usage above the worst case ")
    assert "; also 1 calls of " in spend["stop_reason"] and "failed in a row" in spend["stop_reason"]
    assert "stopped: the endpoint reported usage above the worst case" in result.stderr


def test_an_endpoint_billing_above_the_worst_case_from_its_first_reply_is_found_by_one_call(tmp_path, dataset,
                                                                                            endpoint):
    """With concurrency 4, the first four profiling calls were sent at once, before any reply was seen: an endpoint
    reporting 100,000 completion tokens for every call was billed for four (the budget's journal kept to it, the
    provider's bill did not). A model's first call is now made alone, so one call finds it; an honest endpoint gets
    the same run at any concurrency."""
    ep, url = endpoint(lambda n: "huge")
    out = tmp_path / "run"
    result = run(config(tmp_path, dataset, url, concurrency=4), out)
    assert result.exit_code == 2 and "the endpoint reported usage above the worst case" in result.stderr
    spend = strict_loads((out / "spend.json").read_text())
    assert ep.requests == 1 and spend["overbilled_calls"] == 1 and spend["calls_made_this_run"] == 1, spend
    for concurrency in (1, 4):
        ep, url = endpoint(lambda n: "honest")
        folder = tmp_path / f"honest{concurrency}"
        assert run(config(tmp_path, dataset, url, concurrency=concurrency), folder).exit_code == 0
    decisions = [(tmp_path / f"honest{c}" / "decision.json").read_bytes() for c in (1, 4)]
    assert decisions[0] == decisions[1]


def test_a_folder_with_an_overbilled_call_makes_no_further_call(tmp_path, dataset, endpoint):
    """A provider bills what it reports: after a reply billed above its worst case, the journal's charges fall short
    of the bill, so re-running in the folder makes no new call, even against an endpoint that now behaves, and says
    why in one line."""
    _, url = endpoint(lambda n: "honest" if n <= PROFILING_CALLS else "huge")
    path, out = config(tmp_path, dataset, url), tmp_path / "run"
    first = run(path, out)
    assert first.exit_code == 2 and "none was made" in first.stderr, first.output
    assert "re-run to resume" not in first.stderr and "new --out folder" in first.stderr, first.stderr
    ep, url = endpoint(lambda n: "honest")
    path = config(tmp_path, dataset, url)
    again = run(path, out)
    lines = again.stderr.strip().splitlines()
    assert again.exit_code == 2 and len(lines) == 1 and ep.requests == 0, again.output
    assert "above the worst case" in lines[0] and "new --out folder" in lines[0], lines[0]
    spend = strict_loads((out / "spend.json").read_text())
    assert spend["stopped_by"] == "failures" and spend["stop_reason"].startswith("an earlier run in this folder")


def test_a_profiling_call_billed_above_its_worst_case_says_to_use_a_new_folder_and_what_was_reported(
        tmp_path, dataset, endpoint):
    """An overbilled profiling call failed profiling, whose line said "re-run to retry them after fixing the
    endpoint", and the re-run then refused; and spend.json said only the worst cases charged (within the budget)
    while the endpoint had reported, and a provider bills, 100,000 completion tokens more."""
    _, url = endpoint(lambda n: "huge" if n == PROFILING_CALLS else "honest")  # the last: profiling ends
    out = tmp_path / "run"
    result = run(config(tmp_path, dataset, url), out)
    line = result.stderr.strip()
    assert result.exit_code == 2 and len(line.splitlines()) == 1, result.output
    assert " profiling calls failed (e.g. " in line and "re-run to retry them" not in line, line
    assert line.endswith("use a new --out folder") and "the endpoint reported usage above the worst case" in line
    spend = strict_loads((out / "spend.json").read_text())
    (over,) = [r for r in finished(out) if r.get("overbilled")]
    reported = over["overbilled"].split(" completion tokens reported")[0].split(" and ")
    assert reported[1] == "100000" and spend["overbilled_calls"] == 1
    assert spend["overbilled_reported_tokens"] == over["overbilled_cost"] == float(reported[0].split()[0]) + 100000
    assert spend["spent_tokens"] <= BUDGET < spend["overbilled_reported_tokens"]


def test_a_kill_during_profiling_leaves_the_methods_run_as_it_was(tmp_path, dataset, endpoint):
    """A profiling call cut off by a kill is charged its worst case, then made again. That charge was counted as
    profiling's in rho, so the resumed run got a smaller rho, other initial rounds and other asks (on one
    dollar run, another decision). rho now comes from the calls' own charges: the method asks what the
    uninterrupted run asks, and the lost charge only makes the budget stop it sooner."""
    ep, url = endpoint(lambda n: "honest")
    path = config(tmp_path, dataset, url)
    assert run(path, tmp_path / "whole").exit_code == 0
    shutil.copytree(tmp_path / "whole", tmp_path / "killed")
    journal_path = tmp_path / "killed" / "calls.jsonl"
    lines = journal_path.read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if '"p:1:1"' in line and '"start"' not in line)
    journal_path.write_text("\n".join(lines[:cut]) + "\n")  # as if killed while p:1:1 was in flight
    for name in ("spend.json", "decision.json"):
        (tmp_path / "killed" / name).unlink()
    assert run(path, tmp_path / "killed").exit_code == 0
    whole, killed = (strict_loads((tmp_path / f / "spend.json").read_text()) for f in ("whole", "killed"))
    assert killed["lost_calls"] == 1 and killed["profiling_tokens"] > whole["profiling_tokens"]
    assert killed["rho"] == whole["rho"] and killed["spent_tokens"] <= BUDGET

    def asks(folder: str) -> list[tuple[str, str]]:
        return [(r["config"], r["instance"]) for r in finished(tmp_path / folder) if r["key"].startswith("e:")]
    assert 0 < len(asks("killed")) <= len(asks("whole"))
    assert asks("killed") == asks("whole")[:len(asks("killed"))]  # the same asks, stopped sooner at most


def test_a_connection_never_made_in_time_is_free_and_retried(monkeypatch):
    """A host that drops packets (a wrong address, a firewall) ends each attempt in a connect timeout: the request
    was never sent, so the attempt is a free 'connection' failure (as a refused connection is), retried, and it
    counts toward the calls that never reached the endpoint; a timeout once connected stays billable."""
    import httpx

    from cabench.live.client import ChatClient

    raised = [httpx.ConnectTimeout("timed out"), httpx.ReadTimeout("timed out")]

    def stream(*args, **kwargs):
        raise raised[0]

    client = ChatClient(Endpoint(base_url="http://127.0.0.1:9/v1", max_retries=2, backoff_s=0.0, max_backoff_s=0.0,
                                 timeout_s=1.5))
    monkeypatch.setattr(client.client, "stream", stream)
    try:
        outcome = client.chat({})
        assert [(a.status, a.billable) for a in outcome.attempts] == [("connection", False)] * 3
        assert outcome.error == "could not connect within 1.5 s"
        raised.pop(0)
        assert [(a.status, a.billable) for a in client.chat({}).attempts] == [("timeout", True)] * 3
    finally:
        client.close()


def test_a_rerun_stopped_before_any_call_by_an_overbilled_call_is_one_line(tmp_path, dataset, endpoint):
    """A profiling call billed above its worst case stops the run; the same command again, making no call, is
    refused in one line (it ended in a traceback, exit 1) and leaves the folder's files as they were."""
    _, url = endpoint(lambda n: "huge" if n == PROFILING_CALLS else "honest")
    path, out = config(tmp_path, dataset, url), tmp_path / "run"
    first = run(path, out)
    assert first.exit_code == 2 and first.stderr.count("\n") == 1, first.output
    before = {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}
    ep, url = endpoint(lambda n: "honest")
    again = run(config(tmp_path, dataset, url), out)
    assert again.exit_code == 2 and again.stderr.count("\n") == 1 and "Traceback" not in again.output, again.output
    assert again.stderr.startswith("error: hostile: stopped: ") and ep.requests == 0
    assert {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()} == before
