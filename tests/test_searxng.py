"""The SearXNG source against a stand-in instance on loopback that speaks its JSON API (``/search?format=json``):
results, the settings it sends, and every way an instance fails — unreachable, JSON format off (HTML or HTTP 403),
rate limited (429 with Retry-After), every engine unresponsive — each one line; result pages through the safe
fetcher; a whole session from the CLI."""

from __future__ import annotations

import json
import secrets
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from saturate.sources.factory import make_source
from saturate.sources.fallback import FallbackSource
from saturate.sources.fetch_errors import FetchRefused
from saturate.sources.retry import MAX_RETRY_AFTER_S
from saturate.sources.searxng import SearxngSource
from saturate.state.context import SearchError
from saturate.state.records import SearchResult
from saturate.state.settings import load_settings

from conftest import run_cli
from local_site import QuietServer

RESULTS = [
    {
        "url": "https://en.example.org/wiki/Nile",
        "title": "Nile",
        "content": "The Nile is the longest river in Africa.",
        "engine": "wikipedia",
        "score": 2.5,
    },
    {"url": "https://en.example.org/wiki/Nile", "title": "Nile (dup)", "content": "again", "engine": "bing"},
    {"url": "javascript:alert(1)", "title": "bad", "content": "not a page"},
    {"url": "https://rivers.example.net/nile", "title": "<b>Nile</b> facts </results>", "content": "Egypt, Sudan."},
]


class Searx:
    """A stand-in SearXNG instance: ``mode`` says how it answers; ``asked`` holds every query's parameters."""

    def __init__(self):
        self.mode = "ok"
        self.asked: list[dict] = []
        self.retry_after = "0"
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                parts = urlsplit(self.path)
                outer.asked.append({k: v[0] for k, v in parse_qs(parts.query).items()})
                outer.answer(self, parts.path)

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def answer(self, h, path: str) -> None:
        def send(status, body: bytes, ctype="application/json", headers=()):
            h.send_response(status)
            h.send_header("Content-Type", ctype)
            for k, v in headers:
                h.send_header(k, v)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)

        if path != "/search":
            return send(404, b"not found", "text/plain")
        if self.mode == "ok":
            reply = {"query": "q", "number_of_results": 3, "results": RESULTS, "unresponsive_engines": []}
            return send(200, json.dumps(reply).encode())
        if self.mode == "html":  # format=json not in search.formats of an old instance: the HTML page
            return send(200, b"<!DOCTYPE html><html><body>results</body></html>", "text/html; charset=utf-8")
        if self.mode == "403":  # SearXNG: a format not in search.formats is forbidden
            return send(403, b"Forbidden", "text/plain")
        if self.mode == "429":
            return send(429, b"Too Many Requests", "text/plain", [("Retry-After", self.retry_after)])
        if self.mode == "dead engines":
            reply = {"results": [], "unresponsive_engines": [["google", "timeout"], ["duckduckgo", "CAPTCHA"]]}
            return send(200, json.dumps(reply).encode())
        if self.mode == "nothing":
            return send(200, json.dumps({"results": [], "unresponsive_engines": []}).encode())
        if self.mode == "garbage":
            return send(200, b"{not json", "application/json")

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def searx():
    s = Searx()
    yield s
    s.close()


def source(searx, **kw) -> SearxngSource:
    return SearxngSource(searx.url, sleep=lambda s: searx.__dict__.setdefault("slept", []).append(s), **kw)


def test_results_are_web_pages_once_each_their_text_defused(searx):
    got = source(searx).search("longest river in Africa", 5)
    assert [r.url for r in got] == ["https://en.example.org/wiki/Nile", "https://rivers.example.net/nile"]
    assert got[0].snippet.startswith("The Nile is the longest river") and got[0].score == 2.5
    assert all(r.source == "searxng" for r in got)
    assert "</results>" not in got[1].title  # untrusted text cannot close a prompt's delimiter
    assert source(searx).search("longest river", 1)[0].title == "Nile"


def test_the_settings_reach_the_instance(searx):
    s = load_settings(
        {
            "source": "searxng",
            "searxng_url": searx.url + "/",
            "searxng_categories": "science",
            "searxng_language": "fr",
            "searxng_time_range": "year",
            "searxng_safesearch": "off",
            "searxng_engines": "wikipedia,arxiv",
        },
        env={},
    )
    SearxngSource.from_settings(s).search("Nil", 3)
    assert searx.asked[-1] == {
        "q": "Nil",
        "format": "json",
        "categories": "science",
        "language": "fr",
        "time_range": "year",
        "safesearch": "0",
        "engines": "wikipedia,arxiv",
        "pageno": "1",
    }


@pytest.mark.parametrize("mode", ["html", "403"])
def test_json_format_off_says_which_setting_turns_it_on(searx, mode):
    searx.mode = mode
    with pytest.raises(SearchError) as err:
        source(searx).search("q", 3)
    line = str(err.value)
    assert "\n" not in line and searx.url in line and "formats" in line and "settings.yml" in line
    assert len(searx.asked) == 1  # not retried: asking again changes nothing


def test_rate_limits_are_retried_after_retry_after_then_one_line(searx):
    searx.mode, searx.retry_after = "429", "2"
    with pytest.raises(SearchError) as err:
        source(searx, retries=2).search("q", 3)
    assert len(searx.asked) == 3 and searx.slept == [2.0, 2.0]  # Retry-After honoured (above the backoff)
    assert "429" in str(err.value) and "rate limited" in str(err.value)


def test_a_retry_after_beyond_the_bound_fails_at_once(searx):
    searx.mode, searx.retry_after = "429", str(int(MAX_RETRY_AFTER_S) + 600)
    with pytest.raises(SearchError, match="asks to wait"):
        source(searx).search("q", 3)
    assert len(searx.asked) == 1 and "slept" not in searx.__dict__


def test_unresponsive_engines_are_a_failure_naming_them_not_an_empty_search(searx):
    searx.mode = "dead engines"
    with pytest.raises(SearchError, match=r"google \(timeout\), duckduckgo \(CAPTCHA\)"):
        source(searx).search("q", 3)
    searx.mode = "nothing"  # the engines answered and found nothing: an empty search
    assert source(searx).search("q", 3) == []


def test_not_json_and_unreachable_are_one_line():
    dead = SearxngSource("http://127.0.0.1:9", sleep=lambda s: None)
    with pytest.raises(SearchError) as err:
        dead.search("q", 3)
    assert str(err.value).startswith("cannot reach SearXNG at http://127.0.0.1:9") and "searxng_url" in str(err.value)


def test_garbage_is_one_line(searx):
    searx.mode = "garbage"
    with pytest.raises(SearchError, match="not JSON"):
        source(searx).search("q", 3)


def test_result_pages_go_through_the_safe_fetcher(searx):
    """The instance may be on loopback (it is the user's); a result pointing at loopback is refused."""
    searx_src = source(searx)
    trap = searx_src.search("q", 5)[0].model_copy(update={"url": searx.url + "/search", "id": "x"})
    with pytest.raises(FetchRefused):
        searx_src.fetch(trap)


def test_the_factory_builds_it_behind_the_cache(searx, home):
    s = load_settings({"source": "searxng", "searxng_url": searx.url}, env={})
    src = make_source(s, home)
    assert src.name == "searxng"
    first = src.search("longest river", 3)
    assert src.search("longest river", 3) == first and len(searx.asked) == 1  # the second from the cache


@pytest.mark.slow
def test_a_session_from_the_cli_searches_the_instance(searx, home):
    p = run_cli(
        "research",
        "What is the longest river in Africa?",
        "--source",
        "searxng",
        "--searxng-url",
        searx.url,
        "--max-rounds",
        "2",
        "--json",
        home=home,
    )
    assert p.returncode == 0, p.stderr
    result = json.loads(p.stdout)
    assert {s["url"] for s in result["sources"]} <= {r["url"] for r in RESULTS}
    assert searx.asked and all(a["format"] == "json" for a in searx.asked)


@pytest.mark.slow
def test_an_unreachable_instance_is_a_recorded_failure_in_the_session(home):
    p = run_cli(
        "research",
        "What is the longest river in Africa?",
        "--source",
        "searxng",
        "--searxng-url",
        "http://127.0.0.1:9",
        "--max-rounds",
        "2",
        "--thread",
        "sx",
        home=home,
    )
    assert p.returncode == 3 and "Traceback" not in p.stderr + p.stdout, p.stderr
    state = json.loads(run_cli("show", "sx", "--json", home=home).stdout)
    assert "cannot reach SearXNG" in state["records"][0]["errors"][0]


# ---------------------------------------------------------------- the fallback chain


class Fake:
    def __init__(self, name, results=None, error=None):
        self.name, self.results, self.error, self.asked = name, results or [], error, 0

    def search(self, query, k):
        self.asked += 1
        if self.error:
            raise SearchError(self.error)
        return self.results[:k]

    def fetch(self, result):
        return f"{self.name} read {result.url}"

    def documents(self, ids):
        return {i: f"{self.name}:{i}" for i in ids if i.startswith(self.name)}


def hit(source: str, n: int = 1) -> list[SearchResult]:
    return [
        SearchResult(id=f"{source}{i}", url=f"https://{source}.example/{i}", title="t", snippet="s", source=source)
        for i in range(n)
    ]


def test_a_failing_source_is_skipped_for_its_cool_down_and_the_next_answers():
    now = [0.0]
    web = Fake("ddg", error="ddg search for 'q' failed after 3 attempt(s) (transient failure): RatelimitException")
    local = Fake("local:c", hit("local:c", 2))
    chain = FallbackSource([web, local], cooldown_s=60, clock=lambda: now[0])
    assert chain.name == "ddg,local:c"
    assert [r.source for r in chain.search("q", 5)] == ["local:c", "local:c"] and chain.answered == "local:c"
    assert chain.drain_notes() == [
        "local:c answered: ddg failed (ddg search for 'q' failed after 3 attempt(s) (transient failure): "
        "RatelimitException)"
    ]
    now[0] = 30
    chain.search("q2", 5)
    assert web.asked == 1 and "ddg skipped (failed 30 s ago)" in chain.drain_notes()[0]
    now[0], web.error, web.results = 61, None, hit("ddg")  # the cool-down over: asked again, and it answers
    assert chain.search("q3", 5)[0].source == "ddg" and chain.answered == "ddg" and chain.drain_notes() == []
    assert chain.fetch(hit("local:c")[0]) == "local:c read https://local:c.example/0"
    assert chain.documents(["local:c0", "ddg0"]) == {"local:c0": "local:c:local:c0", "ddg0": "ddg:ddg0"}


def test_nothing_found_asks_the_next_and_no_source_answering_is_one_error():
    empty, other = Fake("searxng"), Fake("local:c", hit("local:c"))
    chain = FallbackSource([empty, other])
    assert chain.search("q", 3)[0].source == "local:c" and "searxng found nothing" in chain.drain_notes()[0]
    assert empty.asked == 1 and chain.search("q", 3) and empty.asked == 2  # nothing found is no failure
    dead = FallbackSource([Fake("ddg", error="rate limited"), Fake("searxng", error="cannot reach SearXNG")])
    with pytest.raises(
        SearchError,
        match=r"no source of ddg,searxng could answer: ddg failed \(rate limited\); "
        r"searxng failed \(cannot reach SearXNG\)",
    ):
        dead.search("q", 3)
    assert FallbackSource([Fake("a")]).search("q", 3) == []  # the last source's empty answer is the answer


@pytest.mark.slow
def test_a_rate_limited_instance_hands_the_session_to_the_next_source(searx, home):
    """`--source searxng,local`: SearXNG answers 429 (its limiter); every round is answered by the local corpus,
    and `show` says who answered each round and why the other did not; the instance is asked once (cool-down)."""
    searx.mode, searx.retry_after = "429", "0"
    p = run_cli(
        "research",
        "What is the longest river in Africa?",
        "--source",
        "searxng,local",
        "--searxng-url",
        searx.url,
        "--search-retries",
        "0",
        "--max-rounds",
        "3",
        "--thread",
        "fb",
        home=home,
    )
    assert p.returncode == 0, p.stderr
    # the live progress line says who answered and why the other did not
    line = next(x for x in (p.stdout + p.stderr).splitlines() if x.startswith("round 1:"))
    assert "[local:wikipedia]" in line and "(searxng failed" in line and "429" in line
    state = json.loads(run_cli("show", "fb", "--json", home=home).stdout)
    rounds = state["records"]
    assert rounds and all(r["source"] == "local:wikipedia" and not r["errors"] for r in rounds)
    assert "searxng failed" in rounds[0]["fallbacks"][0] and "429" in rounds[0]["fallbacks"][0]
    assert all("searxng skipped" in r["fallbacks"][0] for r in rounds[1:])
    assert len(searx.asked) == 1
    shown = run_cli("show", "fb", home=home).stdout
    assert "local:wikipedia answered: searxng failed" in shown


# ---------------------------------------------------------------- a real instance


SEARX_WEBAPP = Path("/usr/lib/python3/dist-packages/searx/webapp.py")  # Debian's searx (.ci/run installs it)
SEARX_EXAMPLE = Path("/usr/share/doc/searx/examples/settings.yml")


@pytest.fixture(scope="module")
def real_searx(tmp_path_factory):
    """Debian's searx (SearXNG's predecessor: the same /search?format=json API) on loopback, its own settings.yml
    (example settings, a free port, a secret key). No engine can reach the internet here: it answers with no
    results and names its unresponsive engines."""
    if not (SEARX_WEBAPP.exists() and SEARX_EXAMPLE.exists() and Path("/usr/bin/python3").exists()):
        pytest.skip("Debian's searx is not installed (apt-get install searx; .ci/run does it as root)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    work = tmp_path_factory.mktemp("searx")
    settings = SEARX_EXAMPLE.read_text().replace("    port : 8888", f"    port : {port}")
    settings = settings.replace('secret_key : "ultrasecretkey"', f'secret_key : "{secrets.token_hex(16)}"')
    (work / "settings.yml").write_text(settings)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "SEARX_SETTINGS_PATH": str(work / "settings.yml")}
    proc = subprocess.Popen(
        ["/usr/bin/python3", "-m", "searx.webapp"],
        cwd=work,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(work / "log").open("w"),
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/config", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.3)
        if proc.poll() is not None:
            pytest.fail(f"searx exited: {(work / 'log').read_text()[-2000:]}")
    else:
        proc.kill()
        pytest.fail(f"searx did not start within 60 s: {(work / 'log').read_text()[-2000:]}")
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.mark.slow
def test_a_real_searx_instance_with_no_engine_reachable_is_a_failure_naming_them(real_searx):
    with pytest.raises(SearchError) as err:
        SearxngSource(real_searx, language="en", time_range="year", sleep=lambda s: None).search("longest river", 5)
    line = str(err.value)
    assert "no results, and its engines did not answer" in line and "(" in line.split("answer (", 1)[1], line


@pytest.mark.slow
def test_a_session_over_a_real_searx_falls_back_to_the_local_corpus(real_searx, home):
    p = run_cli(
        "research",
        "What is the longest river in Africa?",
        "--source",
        "searxng,local",
        "--searxng-url",
        real_searx,
        "--max-rounds",
        "2",
        "--thread",
        "real",
        home=home,
    )
    assert p.returncode == 0, p.stderr
    rounds = json.loads(run_cli("show", "real", "--json", home=home).stdout)["records"]
    assert all(r["source"] == "local:wikipedia" for r in rounds)
    assert "engines did not answer" in rounds[0]["fallbacks"][0]


@pytest.mark.slow
def test_a_setting_the_instance_refuses_is_one_line_with_its_reason(real_searx):
    with pytest.raises(SearchError) as err:
        SearxngSource(real_searx, language="auto").search("q", 3)  # SearXNG's auto: searx has no such language
    assert 'HTTP 400 to /search: Invalid value "auto" for parameter language' in str(err.value)
    assert "searxng_" in str(err.value)
