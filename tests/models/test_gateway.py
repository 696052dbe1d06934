"""The gateway against a scripted provider behind real litellm: retries, Retry-After, typed errors,
the request store as cache, secrets, and the per-model concurrency limit."""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import socket
import threading
import time

import litellm
import pytest
from http_endpoint import OK, Answer, closed_port, openai_endpoint
from model_fakes import FAKE_KEY_ENV, FAKE_SECRET

from memsql_assets.lib.http_retry import parse_retry_after
from memsql_assets.lib.models.failures import classify
from memsql_assets.lib.models.gateway import NO_API_KEY, REPLAYED_NOTE, ModelGateway, RetryPolicy
from memsql_assets.lib.models.request_store import RequestStore

ENV = {FAKE_KEY_ENV: FAKE_SECRET}


def msgs(i: int | str = 0) -> list[dict]:
    return [{"role": "system", "content": "Write SQLite."}, {"role": "user", "content": f"question {i}"}]


class Sleeps(list):
    """Records backoff delays instead of waiting them."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make_gateway(tmp_path, registry, sleeps=None, **kw) -> ModelGateway:
    kw.setdefault("retry", RetryPolicy(max_attempts=4, max_rate_limited_attempts=4, base_delay_s=1.0, jitter=False))
    return ModelGateway(
        registry,
        RequestStore.at_home(tmp_path),
        home=tmp_path,
        environ=kw.pop("environ", ENV),
        sleep=sleeps if sleeps is not None else Sleeps(),
        **kw,
    )


def run(coro):
    return asyncio.run(coro)


@pytest.mark.slow
def test_success_is_stored_and_a_rerun_makes_zero_calls(tmp_path, test_registry, fake_provider):
    gw = make_gateway(tmp_path, test_registry)
    reply = run(gw.acomplete("flaky", msgs(), {"session_id": "S-1", "turn_index": 1}))
    assert reply.ok and reply.text == "SELECT 1" and not reply.cache_hit and reply.attempts == 1
    assert reply.reasoning == "I think SELECT 2 is wrong"  # kept apart, never the SQL
    assert (reply.prompt_tokens, reply.completion_tokens) == (1000, 500)
    assert reply.cost_usd == pytest.approx((1000 * 2.0 + 500 * 10.0) / 1e6)
    assert fake_provider.calls[0]["api_key"] == FAKE_SECRET

    again = make_gateway(tmp_path, test_registry)
    # The turn context plays no part in an API model's key.
    hit = run(again.acomplete("flaky", msgs(), {"session_id": "S-2", "turn_index": 7}))
    assert hit.cache_hit and hit.attempts == 0 and again.calls == 0 and len(fake_provider.calls) == 1
    assert (hit.text, hit.reasoning, hit.cost_usd, hit.request_key) == (
        reply.text,
        reply.reasoning,
        reply.cost_usd,
        reply.request_key,
    )


@pytest.mark.parametrize(
    ("script", "sleeps", "attempts"),
    [
        (["429"], [1.0], 2),
        (["429@7"], [7.0], 2),
        (["500", "timeout", "500"], [1.0, 2.0, 4.0], 4),
        (["429@2", "500"], [2.0, 2.0], 3),  # Retry-After, then backoff of attempt 2
    ],
)
def test_transient_failures_are_retried(tmp_path, test_registry, fake_provider, script, sleeps, attempts):
    fake_provider.script("flaky", *script)
    recorded = Sleeps()
    reply = run(make_gateway(tmp_path, test_registry, recorded).acomplete("flaky", msgs(), {}))
    assert reply.ok and reply.text == "SELECT 1"
    assert reply.attempts == attempts == len(fake_provider.calls)
    assert recorded == sleeps


def test_retry_after_as_http_date(tmp_path, test_registry, fake_provider):
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    fake_provider.script("flaky", f"429@{when}")
    recorded = Sleeps()
    assert run(make_gateway(tmp_path, test_registry, recorded).acomplete("flaky", msgs(), {})).ok
    assert 27 <= recorded[0] <= 30


def test_a_rate_limited_call_gets_more_attempts_than_other_transient_failures(tmp_path, test_registry, fake_provider):
    """A 429 asks the client to slow down (the adaptive limit does): it is retried up to
    max_rate_limited_attempts; a 500 only up to max_attempts."""
    policy = RetryPolicy(max_attempts=4, max_rate_limited_attempts=6, base_delay_s=1.0, jitter=False)
    fake_provider.script("flaky", *["429"] * 5)
    reply = run(make_gateway(tmp_path, test_registry, retry=policy).acomplete("flaky", msgs(), {}))
    assert reply.ok and reply.attempts == 6
    fake_provider.script("flaky", *["500"] * 5)
    reply = run(make_gateway(tmp_path, test_registry, retry=policy).acomplete("flaky", msgs("other"), {}))
    assert reply.error_type == "server_error" and reply.attempts == 4


def test_exhausted_retries_are_typed_but_never_replayed(tmp_path, test_registry, fake_provider):
    """a transient failure is not an answer; a re-run asks again."""
    fake_provider.script("flaky", "429", "429", "429", "429")
    reply = run(make_gateway(tmp_path, test_registry).acomplete("flaky", msgs(), {}))
    assert reply.error_type == "rate_limited" and reply.attempts == 4 and reply.text == ""
    assert "model flaky at memsqltest's default endpoint: gave up after 4 attempts" in reply.error_message
    assert RequestStore.at_home(tmp_path).count() == 0

    rerun = make_gateway(tmp_path, test_registry)
    again = run(rerun.acomplete("flaky", msgs(), {}))
    assert again.ok and not again.cache_hit and rerun.calls == 1


@pytest.mark.parametrize("error_type", ["connection_error", "timeout", "rate_limited", "server_error"])
def test_old_records_of_transient_failures_are_readable_and_asked_again(
    tmp_path, test_registry, fake_provider, error_type
):
    """Stores written by older versions hold transient failures (cache_hit=True, attempts=0 forever)."""
    gw = make_gateway(tmp_path, test_registry)
    key = gw.request_key_for("flaky", msgs(), {})
    RequestStore.at_home(tmp_path).put(
        key,
        {
            "model_key": "flaky",
            "response": None,
            "usage": {"prompt_tokens": 0, "completion_tokens": 0},
            "latency_s": 0.1,
            "cost_usd": 0.0,
            "attempts": 6,
            "error": {"type": error_type, "message": "gave up after 6 attempts: ...", "status_code": 500},
        },
    )
    reply = run(gw.acomplete("flaky", msgs(), {}))
    assert reply.ok and not reply.cache_hit and gw.calls == 1
    assert RequestStore.at_home(tmp_path).get(key)["error"] is None, "the answer replaced the failure"


def test_deterministic_failures_are_replayed_labelled_and_retry_errors_asks_again(
    tmp_path, test_registry, fake_provider
):
    fake_provider.script("flaky", "400")
    first = run(make_gateway(tmp_path, test_registry).acomplete("flaky", msgs(), {}))
    assert first.error_type == "bad_request" and "replayed" not in first.error_message

    rerun = make_gateway(tmp_path, test_registry)
    cached = run(rerun.acomplete("flaky", msgs(), {}))
    assert cached.cache_hit and cached.error_type == "bad_request" and rerun.calls == 0
    assert cached.error_message == f"{first.error_message} ({REPLAYED_NOTE})"

    retried = make_gateway(tmp_path, test_registry, retry_errors=True)
    refreshed = run(retried.acomplete("flaky", msgs(), {}))
    assert refreshed.ok and not refreshed.cache_hit and retried.calls == 1


def test_a_closed_port_is_a_fast_connection_error_naming_model_endpoint_and_cause(tmp_path, write_registry):
    """A real OpenAI-compatible call to a closed 127.0.0.1 port (no fake provider)."""
    from memsql_assets.lib.models.registry import load_registry

    port = closed_port()
    registry = load_registry(
        write_registry(
            f"""
            models:
              local-llm:
                litellm_model: openai/some-model
                kind: api
                reasoning: {{type: none}}
                api_base: "http://127.0.0.1:{port}/v1"
                api_key_env: {FAKE_KEY_ENV}
                max_concurrency: 1
                price_per_mtok: {{input: 1, output: 1}}
                enabled: true
            """
        )
    )
    recorded = Sleeps()
    gw = make_gateway(tmp_path, registry, recorded, retry=RetryPolicy(jitter=False))
    reply = run(gw.acomplete("local-llm", msgs(), {}))
    assert reply.error_type == "connection_error"
    assert reply.attempts == RetryPolicy().max_connect_attempts == 3 and recorded == [1.0, 2.0]
    message = reply.error_message
    assert message.startswith(f"model local-llm at http://127.0.0.1:{port}/v1: gave up after 3 attempts")
    assert f"Cannot connect to host 127.0.0.1:{port}" in message and "SSLContext" not in message
    assert RequestStore.at_home(tmp_path).count() == 0, "never stored: a re-run asks again"


def failure_of(api_base: str) -> Exception:
    """What litellm raises for one real call to `api_base` (anthropic's HTTP path)."""
    try:
        run(
            litellm.acompletion(
                model="anthropic/claude-x",
                api_base=api_base,
                api_key="sk-ant-fake",
                messages=msgs(),
                num_retries=0,
                timeout=20,
            )
        )
    except Exception as exc:  # noqa: BLE001 - what litellm raises is under test
        return exc
    raise AssertionError(f"a call to {api_base} succeeded")


def test_a_dns_failure_is_a_connection_error():
    """A name that cannot resolve (RFC 6761 `.invalid`)."""
    failure = classify(failure_of("https://memsql-unreachable.invalid"))
    assert failure.error_type == "connection_error" and failure.cannot_connect
    assert "memsql-unreachable.invalid" in failure.message


def test_a_tls_failure_is_a_connection_error():
    """https to a server that does not speak TLS: the handshake fails."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]

        def answer_in_plain_text() -> None:
            conn, _ = server.accept()
            with conn:
                conn.recv(1024)
                conn.sendall(b"HTTP/1.0 200 OK\r\n\r\n")

        threading.Thread(target=answer_in_plain_text, daemon=True).start()
        failure = classify(failure_of(f"https://127.0.0.1:{port}"))
    assert failure.error_type == "connection_error" and failure.cannot_connect
    assert "SSL" in failure.message, failure.message


def endpoint_registry(write_registry, url: str, key_line: str = f"api_key_env: {FAKE_KEY_ENV}"):
    from memsql_assets.lib.models.registry import load_registry

    return load_registry(
        write_registry(
            f"""
            models:
              local-llm:
                litellm_model: openai/tiny-sql
                kind: api
                reasoning: {{type: none}}
                api_base: "{url}"
                {key_line}
                max_concurrency: 1
                price_per_mtok: {{input: 1, output: 1}}
                enabled: true
            """
        )
    )


HTML_PAGE = b"<!doctype html><html><body><h1>Welcome to nginx!</h1>" + b"<p>padding</p>" * 50_000 + b"</body></html>"
NOT_A_COMPLETION = {
    "other_json": Answer(body=b'{"foo": 1}'),
    "html_page": Answer(body=HTML_PAGE, content_type="text/html"),
    "html_as_json": Answer(body=b"<html>oops</html>"),
    "json_list": Answer(body=b"[1, 2]"),
    "empty_body": Answer(body=b""),
    "choices_not_a_list": Answer(body=b'{"choices": "SELECT 1"}'),
}


@pytest.mark.parametrize("answer", NOT_A_COMPLETION.values(), ids=NOT_A_COMPLETION)
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")  # litellm's, on `choices` of a str
def test_a_2xx_answer_that_is_not_a_chat_completion_is_a_malformed_response(tmp_path, write_registry, answer):
    """Real litellm HTTP against a server that answers 200 in another shape: litellm reports a 500 of
    its own making, which must not become a retried server_error (nor stop the partition as one)."""
    with openai_endpoint() as server:
        server.script.append(answer)
        recorded = Sleeps()
        gw = make_gateway(tmp_path, endpoint_registry(write_registry, server.url), recorded)
        reply = run(gw.acomplete("local-llm", msgs(), {}))
    assert (reply.error_type, reply.attempts, recorded, server.calls) == ("malformed_response", 1, [], 1)
    assert reply.error_message.startswith(f"model local-llm at {server.url}: the endpoint answered, but not with")
    assert len(reply.error_message) < 500, "a whole web page is not quoted"
    stored = RequestStore.at_home(tmp_path).get(reply.request_key)
    assert stored["error"]["type"] == "malformed_response", "the request's outcome: replayed, labelled"


def test_a_real_5xx_with_an_html_body_is_still_a_retried_server_error(tmp_path, write_registry):
    with openai_endpoint() as server:
        server.script.append(Answer(502, b"<html>bad gateway</html>", "text/html"))
        recorded = Sleeps()
        gw = make_gateway(tmp_path, endpoint_registry(write_registry, server.url), recorded)
        reply = run(gw.acomplete("local-llm", msgs(), {}))
    assert reply.ok and reply.text == "SELECT 1" and reply.attempts == 2 and recorded == [1.0]


def test_an_api_base_without_a_key_never_receives_a_provider_key_of_the_environment(
    tmp_path, write_registry, monkeypatch
):
    """Local servers often check no key: the entry names none, and litellm must not fall back on
    OPENAI_API_KEY (which would send the user's real key to whatever listens there)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key-MUSTNOTLEAVE")
    with openai_endpoint() as server:
        server.answer = lambda _n: OK
        registry = endpoint_registry(write_registry, server.url, key_line="")
        reply = run(make_gateway(tmp_path, registry, environ={}).acomplete("local-llm", msgs(), {}))
    assert reply.ok and reply.text == "SELECT 1" and (reply.prompt_tokens, reply.completion_tokens) == (10, 2)
    assert [r["headers"]["authorization"] for r in server.requests] == [f"Bearer {NO_API_KEY}"]
    assert server.requests[0]["body"]["model"] == "tiny-sql"
    assert "MUSTNOTLEAVE" not in json.dumps(RequestStore.at_home(tmp_path).get(reply.request_key))


@pytest.mark.parametrize(("spec", "tokens"), [("none_content", (1000, 500)), ("no_choices", (1000, 500))])
def test_a_malformed_reply_keeps_the_usage_the_provider_billed(
    tmp_path, test_registry, fake_provider, spec, tokens
):
    """the ledger counted a malformed reply as 0 tokens and $0."""
    fake_provider.script("flaky", spec)
    reply = run(make_gateway(tmp_path, test_registry).acomplete("flaky", msgs(), {}))
    cost = test_registry.get("flaky").cost_usd(*tokens)
    assert reply.error_type == "malformed_response"
    assert (reply.prompt_tokens, reply.completion_tokens, reply.cost_usd) == (*tokens, cost) and cost > 0
    stored = RequestStore.at_home(tmp_path).get(reply.request_key)
    assert stored["usage"] == {"prompt_tokens": tokens[0], "completion_tokens": tokens[1]}
    assert stored["cost_usd"] == cost
    cached = run(make_gateway(tmp_path, test_registry).acomplete("flaky", msgs(), {}))
    assert cached.cache_hit and (cached.prompt_tokens, cached.cost_usd) == (tokens[0], cost)


@pytest.mark.parametrize(
    ("spec", "error_type", "words"),
    [
        ("400", "bad_request", "bad param"),
        ("none_content", "malformed_response", "content is None"),
        ("no_choices", "malformed_response", "no choices"),
        ("huge", "malformed_response", "over the 200,000 limit"),
        ("non_utf8", "malformed_response", "not valid UTF-8"),
    ],
)
def test_permanent_failures_are_typed_not_raised(
    tmp_path, test_registry, fake_provider, spec, error_type, words
):
    fake_provider.script("flaky", spec)
    recorded = Sleeps()
    reply = run(make_gateway(tmp_path, test_registry, recorded).acomplete("flaky", msgs(), {}))
    assert (reply.error_type, reply.attempts, recorded) == (error_type, 1, [])
    assert words in reply.error_message
    store = RequestStore.at_home(tmp_path)
    assert store.get(reply.request_key)["error"]["type"] == error_type


def test_failures_at_a_given_rate_all_recover_and_attempts_add_up(tmp_path, test_registry, fake_provider):
    fake_provider.fail_rate = 0.3
    gw = make_gateway(tmp_path, test_registry, retry=RetryPolicy(max_attempts=10, jitter=True, seed=3))

    async def many():
        return await asyncio.gather(*(gw.acomplete("flaky", msgs(i), {}) for i in range(40)))

    replies = run(many())
    assert all(r.ok for r in replies)
    assert sum(r.attempts for r in replies) == len(fake_provider.calls) == gw.calls
    assert gw.calls > 40  # some failed and were retried (seeded: deterministic)


def test_a_hung_call_times_out_and_is_retried(tmp_path, test_registry, fake_provider):
    fake_provider.script("flaky", "sleep:5")
    reply = run(make_gateway(tmp_path, test_registry, timeout_s=0.2).acomplete("flaky", msgs(), {}))
    assert reply.ok and reply.attempts == 2


def test_concurrency_limit_is_honoured(tmp_path, test_registry, fake_provider):
    fake_provider.delay_s = 0.05
    gw = make_gateway(tmp_path, test_registry)

    async def many():
        return await asyncio.gather(*(gw.acomplete("flaky", msgs(i), {}) for i in range(12)))

    assert all(r.ok for r in run(many()))
    assert fake_provider.max_in_flight == test_registry.get("flaky").max_concurrency == 3


def test_missing_api_key_is_unavailable_not_a_crash(tmp_path, test_registry, fake_provider):
    reply = run(make_gateway(tmp_path, test_registry, environ={}).acomplete("flaky", msgs(), {}))
    assert reply.error_type == "unavailable" and f"set {FAKE_KEY_ENV}" in reply.error_message
    assert fake_provider.calls == [] and RequestStore.at_home(tmp_path).count() == 0


def test_no_secret_reaches_any_stored_file(tmp_path, test_registry, fake_provider, monkeypatch):
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    fake_provider.script("flaky", "ok", "400-echo")
    gw = ModelGateway(test_registry, RequestStore.at_home(tmp_path), home=tmp_path, sleep=Sleeps())
    ok = run(gw.acomplete("flaky", msgs(1), {}))
    denied = run(gw.acomplete("flaky", msgs(2), {}))
    assert ok.ok and denied.error_type == "bad_request"
    assert all(c["api_key"] == FAKE_SECRET for c in fake_provider.calls)
    files = [f for f in tmp_path.rglob("*") if f.is_file()]
    assert len([f for f in files if f.suffix == ".json"]) == 2
    for file in files:
        assert FAKE_SECRET not in file.read_text(encoding="utf-8")
    assert "[redacted]" in RequestStore.at_home(tmp_path).get(denied.request_key)["error"]["message"]


def test_jittered_backoff_is_bounded_and_deterministic_with_a_seed():
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0, seed=42)
    a = [policy.delay(n, None, random.Random(42)) for n in range(1, 7)]
    b = [policy.delay(n, None, random.Random(42)) for n in range(1, 7)]
    assert a == b
    for n, d in enumerate(a, start=1):
        full = min(8.0, 2 ** (n - 1))
        assert full / 2 <= d <= full
    assert policy.delay(1, 1000.0, random.Random()) == policy.max_retry_after_s


def test_parse_retry_after_forms():
    assert parse_retry_after({"Retry-After": "12"}) == 12.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0) == 10.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after(None) is None
