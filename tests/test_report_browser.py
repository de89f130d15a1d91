"""The HTML reports in a real browser: headless Chromium driven over the DevTools protocol.

Each page must load from a file:// URL with no console error, no uncaught
exception and no network request (it is self-contained), show every round of
the session (or every source query of a multi-source session), show the thread
id exactly as typed (no CSS text-transform), draw its chart over the full width
of its panel with no value label touching the threshold line, and be
screenshotted. Without a Chromium binary the tests are skipped with the reason
(`.ci/run` installs Debian's chromium).
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from saturate.graph import research, research_multi, session_state
from saturate.views.report import _chart_svg, write_html
from saturate.views.report_parts import page as html_page

from conftest import bridge_sources

TASK = "How does photosynthesis convert light into chemical energy?"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless_shell")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    # no background traffic: the page must be the only thing the browser loads
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--metrics-recording-only",
    "--disable-features=Translate,OptimizationHints,MediaRouter",
    "--mute-audio",
    "--hide-scrollbars",
]


def find_browser() -> str | None:
    for name in (os.environ.get("SATURATE_CHROMIUM"), *BROWSERS):
        if name and (path := shutil.which(name)):
            return path
    return None


class DevTools:
    """A minimal Chrome DevTools Protocol client over one browser websocket (flattened sessions)."""

    def __init__(self, exe: str, profile: Path):
        from websockets.sync.client import connect

        self.log = open(profile.parent / "chromium.log", "w")
        self.proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and len(port_file.read_text().split("\n")) >= 2):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"chromium did not start: see {profile.parent / 'chromium.log'}")
            time.sleep(0.05)
        port, path = port_file.read_text().split("\n")[:2]
        self.ws = connect(
            f"ws://127.0.0.1:{port}{path}", max_size=None, open_timeout=15
        ).__enter__()  # kept open until close()
        self.next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30) -> dict:
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        deadline = time.monotonic() + timeout
        while True:
            reply = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, event: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for ev in self.events:
                if ev.get("method") == event:
                    return ev
            self.events.append(json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic()))))

    def open(self, url: str, width: int = 1280, height: int = 900) -> str:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=session)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session,
        )
        self.events.clear()
        nav = self.call("Page.navigate", {"url": url}, session)
        assert not nav.get("errorText"), nav
        self.wait_for("Page.loadEventFired")
        self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))", session)  # painted
        return session

    def evaluate(self, expression: str, session: str):
        res = self.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}, session
        )
        if "exceptionDetails" in res:
            raise RuntimeError(res["exceptionDetails"])
        return res["result"].get("value")

    def screenshot(self, session: str, path: Path) -> bytes:
        data = base64.b64decode(
            self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session)["data"]
        )
        path.write_bytes(data)
        return data

    def problems(self) -> dict[str, list[str]]:
        """Console errors, uncaught exceptions and requests that left the file system, seen so far."""
        errors, requests = [], []
        for ev in self.events:
            m, p = ev.get("method"), ev.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append(
                    "console."
                    + p["type"]
                    + ": "
                    + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                )
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                errors.append("uncaught: " + str(d.get("exception", {}).get("description") or d.get("text")))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                errors.append("log: " + p["entry"].get("text", ""))
            elif m == "Network.requestWillBeSent":
                url = p.get("request", {}).get("url", "")
                if not url.startswith(("file:", "data:", "about:")):
                    requests.append(url)
        return {"errors": errors, "requests": requests}

    def close(self) -> None:
        try:
            if getattr(self, "ws", None) is not None:
                try:
                    self.call("Browser.close", timeout=5)
                except Exception:
                    pass
                self.ws.close()
        finally:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.log.close()


@pytest.fixture
def browser(tmp_path):
    exe = find_browser()
    if exe is None:
        pytest.skip(
            "no Chromium/Chrome binary found: install Debian's `chromium` (apt-get install chromium; "
            ".ci/run does) or set SATURATE_CHROMIUM to a Chrome binary"
        )
    pytest.importorskip(
        "websockets", reason="the DevTools protocol client needs the websockets package (pip install -e '.[test]')"
    )
    profile = tmp_path / "profile"
    profile.mkdir()
    dt = DevTools(exe, profile)
    try:
        yield dt
    finally:
        dt.close()


class OneOutage:
    """The real corpus, except that the third search fails (the error is recorded in its round)."""

    def __init__(self, inner):
        self.inner, self.name, self.calls = inner, inner.name, 0

    def search(self, query, k):
        self.calls += 1
        if self.calls == 3:
            raise RuntimeError("simulated outage")
        return self.inner.search(query, k)

    def fetch(self, result):
        return self.inner.fetch(result)


# what a report's page says about its thread id and its chart, measured in the browser
LAYOUT_JS = """JSON.stringify({
    kicker: document.querySelector('.kicker').innerText,
    text: document.body.innerText,
    chart: (() => {
        const svg = document.querySelector('svg.chart'), panel = svg.parentElement, cs = getComputedStyle(panel);
        const inner = panel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
        const line = svg.querySelector('line.threshold');
        const ly = line ? line.getBoundingClientRect() : null;
        return {
            width: svg.getBoundingClientRect().width, panel: inner,
            plotRight: line ? ly.right - svg.getBoundingClientRect().left : null,
            line: ly ? {top: ly.top, bottom: ly.bottom} : null,
            labels: [...svg.querySelectorAll('text.value')].map(t => {
                const r = t.getBoundingClientRect(); return {text: t.textContent, top: r.top, bottom: r.bottom};
            }),
        };
    })(),
})"""


def check_layout(layout: dict, thread: str) -> None:
    """The exact thread id is visible; the chart spans its panel; no value label touches the threshold line."""
    assert thread in layout["kicker"], layout["kicker"]  # innerText applies text-transform: upper-casing fails here
    assert thread.upper() != thread and thread.upper() not in layout["kicker"]
    chart = layout["chart"]
    assert chart["width"] >= 0.98 * chart["panel"], chart  # the full width of its panel, not the left half
    if chart["line"] is not None:
        assert chart["plotRight"] >= 0.8 * chart["width"], chart  # the plot itself spans the chart
        for label in chart["labels"]:
            assert label["bottom"] < chart["line"]["top"] or label["top"] > chart["line"]["bottom"], (label, chart)


def test_report_renders_offline_with_every_round(home, wiki_source, tmp_path, browser):
    # ε = 1: every sub-threshold round after min_rounds passes through, so the session has ε passes
    # (round 3 fails and scores 0) and ends at the cap; a low enrich_overlap_max gives enrichment skips
    research(
        TASK,
        thread_id="Browse-Mixed",
        source=OneOutage(wiki_source),
        seed=1,
        max_rounds=4,
        min_rounds=2,
        novelty_epsilon=1.0,
        enrich_overlap_max=0.3,
    )
    records = session_state("Browse-Mixed")["records"]
    assert any(r["decision"] == "epsilon_pass" for r in records) and any(r["errors"] for r in records)
    report = write_html("Browse-Mixed", tmp_path / "report.html")

    session = browser.open(report.resolve().as_uri())
    page = browser.evaluate(
        """JSON.stringify({
            title: document.title,
            rounds: [...document.querySelectorAll('tr.round')].map(tr => ({
                round: +tr.dataset.round, decision: tr.dataset.decision, text: tr.innerText,
                visible: tr.getBoundingClientRect().height > 0})),
            bars: [...document.querySelectorAll('g.bar')].map(g => +g.dataset.round),
            resources: performance.getEntriesByType('resource').map(e => e.name),
            text: document.body.innerText,
            width: document.documentElement.scrollWidth,
        })""",
        session,
    )
    page = json.loads(page)
    check_layout(json.loads(browser.evaluate(LAYOUT_JS, session)), "Browse-Mixed")
    shot = browser.screenshot(session, tmp_path / "report.png")
    problems = browser.problems()

    assert problems["errors"] == [], problems["errors"]
    assert problems["requests"] == [] and page["resources"] == [], (problems["requests"], page["resources"])
    assert TASK in page["title"] and TASK in page["text"]
    assert [r["round"] for r in page["rounds"]] == [r["round"] for r in records]
    assert page["bars"] == [r["round"] for r in records]
    for shown, rec in zip(page["rounds"], records):
        assert shown["visible"] and shown["decision"] == rec["decision"]
        if rec["decision"] == "epsilon_pass":
            assert "ε pass" in shown["text"] and f"draw {rec['epsilon_draw']:.3f}" in shown["text"]
        for err in rec["errors"]:
            assert "simulated outage" in err and "simulated outage" in shown["text"]
    assert "skipped" in page["text"] and "Accepted sources" in page["text"] and "Result" in page["text"]
    assert page["width"] <= 1280  # no horizontal overflow at a laptop width

    from PIL import Image

    img = Image.open(io.BytesIO(shot))
    assert img.format == "PNG" and img.size[0] == 1280 and img.size[1] > 900  # the whole page, not the viewport
    assert len(img.convert("RGB").getcolors(1 << 20) or []) > 50  # not a blank page
    print(f"screenshot: {tmp_path / 'report.png'}")


def test_multi_source_report_renders_offline(home, tmp_path, browser):
    thread = "Bridge-Multi"
    result = research_multi(
        "When did the Sydney Harbour Bridge open and who was its engineer?", sources=bridge_sources(), thread_id=thread
    )
    state = session_state(thread)
    assert result.tags["contradicted"] >= 1 and result.key_actors  # the page has tags and actors to show
    report = write_html(thread, tmp_path / "multi.html")

    session = browser.open(report.resolve().as_uri())
    page = json.loads(
        browser.evaluate(
            """JSON.stringify({
                queries: [...document.querySelectorAll('tr.query')].map(tr => ({
                    source: tr.dataset.source, phase: tr.dataset.phase, action: tr.dataset.action,
                    text: tr.innerText, visible: tr.getBoundingClientRect().height > 0})),
                bars: [...document.querySelectorAll('g.bar')].map(g => [g.dataset.source, +g.dataset.event]),
                groups: [...document.querySelectorAll('g.group text')].map(t => t.textContent),
                sources: [...document.querySelectorAll('li.source')].map(li => ({
                    id: li.id, tag: li.dataset.tag, text: li.textContent})),
                actors: [...document.querySelectorAll('.actor h3')].map(h => h.innerText),
                summaries: [...document.querySelectorAll('.loop-summary')].map(p => p.innerText),
                resources: performance.getEntriesByType('resource').map(e => e.name),
                text: document.body.innerText,
                width: document.documentElement.scrollWidth,
            })""",
            session,
        )
    )
    check_layout(json.loads(browser.evaluate(LAYOUT_JS, session)), thread)
    shot = browser.screenshot(session, tmp_path / "multi.png")
    problems = browser.problems()

    assert problems["errors"] == [], problems["errors"]
    assert problems["requests"] == [] and page["resources"] == [], (problems["requests"], page["resources"])
    audit = state["audit"]
    # every source query: a row in its source's table and a bar in its source's group, with the decision
    for spec in state["sources"]:
        events = [ev for ev in audit if ev["source"] == spec["name"]]
        rows = [q for q in page["queries"] if q["source"] == spec["name"]]
        assert [(q["phase"], q["action"]) for q in rows] == [
            (ev["phase"], ev["action"]) for ev in sorted(events, key=lambda ev: (ev["phase"] != "loop", ev["query_no"]))
        ]
    assert sorted(i for _, i in page["bars"]) == list(range(len(audit)))
    assert page["groups"] == [s["name"] for s in state["sources"]]
    for q in page["queries"]:
        assert q["visible"] and q["action"] in ("continue", "stop")
    for ev in audit:
        assert any(ev["reasoning"] in q["text"] for q in page["queries"] if q["source"] == ev["source"])
    assert len(page["summaries"]) == len(state["loops"])
    for loop in state["loops"]:  # each loop's stop reason, as the session wrote it
        assert any(loop["stop_reason"] in s and loop["reasoning"] in s for s in page["summaries"])
    # the merged sources: numbered as cited, with their tag and who found them
    shown = {s["id"]: s for s in page["sources"]}
    for s in result.sources:
        li = shown[f"src-{s.n}"]
        assert li["tag"] == s.tag and "found by:" in li["text"]
        assert all(f.source in li["text"] for f in s.found_by)
    assert {s["tag"] for s in page["sources"]} >= {"contradicted"}
    assert any("John Bradfield" in a for a in page["actors"])
    assert result.answer.split(" [")[0] in page["text"]
    assert page["width"] <= 1280

    from PIL import Image

    img = Image.open(io.BytesIO(shot))
    assert img.format == "PNG" and img.size[0] == 1280 and img.size[1] > 900
    assert len(img.convert("RGB").getcolors(1 << 20) or []) > 50
    print(f"screenshot: {tmp_path / 'multi.png'}")


def test_value_labels_keep_clear_of_the_threshold_line(tmp_path, browser):
    """Bars just under, at and just over the threshold (and a fork's own threshold): no label touches a line."""
    records = [
        {"round": i + 1, "novelty": v, "decision": d}
        for i, (v, d) in enumerate(
            [(2.9, "stop"), (3.0, "accept"), (3.05, "accept"), (2.6, "epsilon_pass"), (0.0, "stop"), (9.95, "accept")]
        )
    ]
    svg = _chart_svg(records, 3.0, "saturate", [3.0, 3.0, 3.0, 2.0, 3.0, 3.0])
    page = tmp_path / "chart.html"
    page.write_text(
        html_page(
            "chart",
            ['<div class="kicker">thread <span class="id">Chart</span></div>', f'<div class="panel">{svg}</div>'],
        )
    )
    session = browser.open(page.resolve().as_uri())
    boxes = json.loads(
        browser.evaluate(
            """JSON.stringify({
                lines: [...document.querySelectorAll('svg.chart line.threshold, svg.chart line.mark')].map(l => {
                    const r = l.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left,
                    right: r.right};}),
                labels: [...document.querySelectorAll('svg.chart text.value')].map(t => {
                    const r = t.getBoundingClientRect(); return {text: t.textContent, top: r.top, bottom: r.bottom,
                    left: r.left, right: r.right};}),
            })""",
            session,
        )
    )
    assert len(boxes["labels"]) == len(records) and len(boxes["lines"]) == 2  # the threshold and round 4's own
    for label in boxes["labels"]:
        for line in boxes["lines"]:
            if label["right"] < line["left"] or label["left"] > line["right"]:
                continue
            assert label["bottom"] < line["top"] or label["top"] > line["bottom"], (label, line)
    check_layout(json.loads(browser.evaluate(LAYOUT_JS, session)), "Chart")
    assert browser.problems()["errors"] == []


def test_the_browser_check_catches_errors_and_requests(tmp_path, browser):
    """Control: the same checks flag a console error, an uncaught exception and an external request."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><html><head><title>bad</title></head><body><p>bad page</p>"
        '<img src="http://192.0.2.1/pixel.png" alt="">'
        "<script>console.error('boom'); throw new Error('uncaught on purpose');</script></body></html>"
    )
    browser.open(page.resolve().as_uri())
    time.sleep(0.3)
    problems = browser.problems()
    assert any("boom" in e for e in problems["errors"]), problems
    assert any("uncaught on purpose" in e for e in problems["errors"]), problems
    assert problems["requests"] == ["http://192.0.2.1/pixel.png"], problems
