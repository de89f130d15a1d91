"""Live progress of a running session, from LangGraph's stream modes (no polling).

The graph is streamed with ``stream_mode=["updates", "custom", "tasks"]``. Two nodes
write custom events through ``runtime.stream_writer``:

- ``search``: ``{"event": "search", "round", "query", "source", "total", "new", "errors"}``
  as soon as the round's results are in;
- ``gate``: ``{"event": "round", **RoundRecord, "threshold", "mode"}`` once the
  gate has decided (accept, epsilon_pass, stop or cap).

``updates`` chunks say which node finished and what it wrote (the page log of
enrichment, the result, ...). ``tasks`` events say which node starts: LangGraph
sends the node's name with the metadata it was added with (build.py:
``{"part": "round", "step": "searching"}``), so the spinner names the step that
is actually running, in the graph's own words (no list of nodes, no guess of
what comes next is kept here). ``Progress`` turns all this into one line per
round, as it happens:

    round 2: '<task> + Zimbabwe' [local:corpus] new 4/5  novelty 4.21 ≥ 3  → accept
    round 3: '<task> + Beitbridge' [local:corpus] new 1/5  novelty 2.40 < 3  → stop: the new results were mostly …

On a terminal the lines are coloured and a spinner names the step in progress
(``round 2: scoring novelty (4 new / 5 results)``, ``after round 2: planning
the query``); otherwise they are plain text. ``style="jsonl"`` writes one JSON object per
event instead (for scripts). Use it as the ``stream_handler`` of
``graph.research`` / ``graph.resume`` / ``graph.timetravel.fork``:

    with Progress(task=task) as progress:
        research(task, stream_handler=progress)
"""

from __future__ import annotations

import json
import math
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from saturate.state.text import printable
from saturate.views.diagram import node_metadata

if TYPE_CHECKING:  # rich is imported when a console is made (the CLI's --help stays fast)
    from langgraph.types import StreamMode
    from rich.console import Console

STREAM_MODE: list[StreamMode] = ["updates", "custom", "tasks"]

DECISION_STYLE = {"accept": "green", "epsilon_pass": "yellow", "stop": "red", "cap": "cyan"}
# why a session ends, after its numbers on the round's line (the gate's reason says it with the numbers)
ENDING = {"stop": "the new results were mostly what was already known", "cap": "the round limit was reached"}
ANSWERED = "every part of the question has an answer in the sources"  # nodes/gate.py: the chains are complete
FAILED = "the search failed, so nothing new came in"  # nodes/gate.py: a stop whose search raised
ROUND_PART = "round"  # node metadata {"part": "round"}: the node runs inside a round (its step is shown with the round)


def short_query(query: str, task: str) -> str:
    """A gap query shown as what it adds to the task: ``<task> + Zimbabwe``."""
    if task and query.startswith(task) and len(query) > len(task):
        return f"<task> + {query[len(task) :].strip()}"
    return query if len(query) <= 90 else query[:89] + "…"


def novelty_bar(novelty: float | None, threshold: float, width: int = 10) -> str:
    """``████▌·····`` with the threshold cell shown as ``│`` when the bar does not reach it."""
    if novelty is None:
        return " " * width
    filled = max(0.0, min(float(novelty), 10.0)) / 10 * width
    cells = []
    t_cell = min(width - 1, int(threshold / 10 * width))
    for i in range(width):
        if i + 1 <= filled:
            cells.append("█")
        elif i < filled:
            cells.append("▌")
        else:
            cells.append("│" if i == t_cell else "·")
    return "".join(cells)


def round_parts(ev: dict, task: str = "") -> list[tuple[str, str]]:
    """One round as (text, rich style) pieces; joined they are the plain line."""
    nov = ev.get("novelty")
    threshold = ev.get("threshold")
    decision = ev.get("decision") or "?"
    parts: list[tuple[str, str]] = [
        (f"round {ev['round']}: ", "bold"),
        (printable(repr(short_query(ev.get("query", ""), task))), ""),
        (printable(f" [{ev.get('source', '')}]"), "dim"),
        (f" new {ev.get('new', 0)}/{ev.get('total', 0)}", ""),
    ]
    if nov is None:
        parts.append(("  novelty -", ""))
    elif ev.get("mode") == "fixed" or threshold is None:
        parts.append((f"  novelty {nov:.2f} (fixed mode)" if ev.get("mode") == "fixed" else f"  novelty {nov:.2f}", ""))
    else:
        parts.append((f"  novelty {nov:.2f} {'≥' if nov >= threshold else '<'} {threshold:g}", ""))
    parts.append((f"  → {decision}", f"bold {DECISION_STYLE.get(decision, '')}".strip()))
    if decision in ENDING:
        reason = ev.get("reason") or ""
        said = next((w for w in (ANSWERED, FAILED) if reason.startswith(w)), ENDING[decision])
        parts.append((f": {said}", ""))
    if ev.get("parts"):
        parts.append((f"  {parts_text(ev['parts'])}", "cyan"))
    elif ev.get("slots"):
        parts.append((f"  {slots_text(ev['slots'])}", "cyan"))
    if decision == "epsilon_pass" and ev.get("epsilon_draw") is not None:
        parts.append((f" (ε draw {ev['epsilon_draw']:.3f})", "yellow"))
    answered = f"{ev.get('source')} answered: "  # a fallback chain's switch (sources/fallback.py): why
    switch = next((f for f in ev.get("fallbacks") or [] if isinstance(f, str) and f.startswith(answered)), "")
    if switch:
        parts.append((printable(f"  ({switch[len(answered) :]})", newlines=False), "yellow"))
    if ev.get("errors"):
        n = len(ev["errors"]) if isinstance(ev["errors"], list) else int(ev["errors"])
        parts.append((f"  errors: {n}", "bold red"))
    return parts


def slot_asks(slot: dict) -> str:
    """What a slot asks, as recorded (``nodes/reading/slots.py::slot_asks``: the question's words and the kind of
    answer); a record written before it was recorded: its head noun or kind and subject."""
    if slot.get("asks"):
        return str(slot["asks"])
    what = slot.get("focus") or (slot.get("kind") if slot.get("kind") not in (None, "", "any") else "answer")
    return f"{what} (of {slot['subject']})" if slot.get("subject") else str(what)


def slot_marks(slot: dict, page: str = "own page") -> list[str]:
    """What is known of a filled slot's value, as every view says it: stable (the same two fills running), its own
    page in hand (``page`` is the word for it), not of the kind asked (``fits`` -1)."""
    marks = (
        ("stable", slot.get("status") == "stable"),
        (page, slot.get("page")),
        ("not of the kind asked", (slot.get("fits") or 0) < 0),
    )
    return [m for m, on in marks if on]


def parts_text(parts: list[dict]) -> str:
    """A question's parts after a round, as the progress line shows them: ``parts 1/2: nuclear power ✓ · solar
    power ?`` (a part is covered once the reader found a sentence addressing it)."""
    covered = sum(1 for p in parts if p.get("covered"))
    shown = [f"{p.get('name', '')} {'✓' if p.get('covered') else '?'}" for p in parts]
    return printable(f"parts {covered}/{len(parts)}: " + " · ".join(shown), newlines=False)


def slots_text(slots: list[dict]) -> str:
    """The question's slots after a round, as the progress line shows them: ``slots 1/2: country of Bubye River
    (a place) = Zimbabwe (stable) → waterfall of Zimbabwe ?``, a one-slot question's slot by the kind of answer it
    wants (``slots 0/1: a number ?``); a value whose own page is in hand is marked ``page``."""
    filled = sum(1 for s in slots if s.get("value"))
    shown = []
    for s in slots:
        what = str(s.get("brief") or slot_asks(s))  # "a number", "country of Bubye River (a place)"
        if s.get("value"):
            marks = ", ".join(slot_marks(s, page="page"))
            shown.append(f"{what} = {s['value']}" + (f" ({marks})" if marks else ""))
        else:
            shown.append(f"{what} ?")
    return printable(f"slots {filled}/{len(slots)}: " + " → ".join(shown), newlines=False)


def slot_line(slot: dict) -> str:
    """One slot as ``show`` and the result print it: ``[1.2] waterfall (of Zimbabwe) = Victoria Falls  stable,
    own page  p 0.92  <source>``; an open slot says what it waits for."""
    what = slot_asks(slot)
    if not slot.get("value"):
        return f"[{slot['slot']}] {what}: not found yet"
    marks = slot_marks(slot)
    p = f"  p {slot['p']:.2f}" if isinstance(slot.get("p"), (int, float)) else ""
    return (
        f"[{slot['slot']}] {what} = {slot['value']}  {', '.join(marks) or slot.get('status', '')}{p}"
        f"  {slot.get('source') or ''}".rstrip()
    )


def round_text(ev: dict, task: str = "") -> str:
    return "".join(t for t, _ in round_parts(ev, task))


def query_counts(ev: dict) -> str:
    """What one source query of a multi-source loop found, each result counted once (an audit event or
    ``source_query`` custom event): ``top 5: 2 new, 3 duplicates (60%)``, then ``; 3 new from further down`` when
    the loop looked past its top results (``exclude_seen``) and found more there.

    The percentage is the count the duplicate stop rule weighs (the share of the top ``results_per_query`` this
    loop already had, against ``duplicate_stop_share``); ``new`` in the event also holds the new results from
    further down, so ``new 5/5 dup 5`` was 0 new + 5 duplicates in the top 5 and 5 new below them."""
    total, dup, new = int(ev.get("total") or 0), int(ev.get("duplicates") or 0), int(ev.get("new") or 0)
    if not total:
        return "no results"
    top_new = max(total - dup, 0)
    text = f"top {total}: {top_new} new, {dup} duplicate{'' if dup == 1 else 's'} ({100 * dup / total:.0f}%)"
    below = new - top_new
    return text + (f"; {below} new from further down" if below > 0 else "")


def _jsonable(x: Any) -> Any:
    return json.loads(json.dumps(x, default=str))


class Progress:
    """A ``stream_handler`` printing one line per round as the session runs.

    ``style``: ``"rich"`` (colours and a spinner on a terminal, plain lines
    otherwise) or ``"jsonl"`` (one JSON object per event). Output goes to
    ``file`` (default stderr) so stdout stays the result.

    The spinner names the step that is running, from the node metadata that
    LangGraph sends with each task start (``"step"``; ``"part": "round"`` puts
    the round before it). ``graph``: the compiled graph to read that metadata
    from when a task event carries none (older LangGraph versions); default
    ``build_graph()``. ``status`` is the spinner's text (kept off a terminal too).
    """

    stream_mode = STREAM_MODE

    def __init__(
        self,
        *,
        task: str = "",
        style: str = "rich",
        file: TextIO | None = None,
        console: Console | None = None,
        threshold: float | None = None,
        graph=None,
        index_every: float = 0.05,
        index_every_s: float = 60.0,
    ):
        if style not in ("rich", "jsonl"):
            raise ValueError(f"unknown progress style {style!r}")
        self.task = task
        self.style = style
        self.file = file
        self.threshold = threshold
        self.rounds: list[dict] = []  # the round events seen, in order
        self.status: str | None = None  # what the spinner says
        self._printed: set[int | None] = set()  # the rounds whose line is out
        self._graph = graph
        self._metadata: dict[str, dict] | None = None  # node -> metadata, read from the graph when needed
        self._step: tuple[str, str | None] | None = None  # the running task's step text and part
        self._round: int | None = None  # the latest round number the stream mentioned
        self._found: dict[int, str] = {}  # round -> "4 new / 5 results" (its search event)
        self._status = None
        self._console: Console | None = console
        self.header: str | None = None  # printed before the first event (rich): nothing shows before a run starts
        self._bar = None  # the progress bar of a first vector build (index_progress)
        self._bar_task = None
        # off a terminal a build prints a line each ``index_every`` of the corpus or ``index_every_s`` seconds,
        # whichever comes first (a 20-minute build is never silent)
        self.index_every, self.index_every_s = index_every, index_every_s
        self._index_next, self._index_at = 0, 0.0  # the next count that prints a line, when the last one printed
        if style == "rich" and console is None:
            from rich.console import Console  # rich only when printing to a console: the CLI's --help stays fast

            self._console = Console(file=file or sys.stderr, highlight=False, soft_wrap=True)

    # ------------------------------------------------------------ plumbing

    @property
    def _rich(self) -> Console:
        """The console the rich style prints to (the jsonl style has none)."""
        if self._console is None:
            raise RuntimeError("a jsonl progress view has no console")
        return self._console

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __call__(self, item: Any) -> None:
        if self.header is not None and self.style == "rich":
            header, self.header = self.header, None
            self._rich.print(printable(header), markup=False)
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            mode, chunk = item
        else:  # a plain 'updates' chunk (handler used without stream_mode)
            mode, chunk = "updates", item
        if mode == "custom" and isinstance(chunk, dict):
            self._custom(chunk)
        elif mode == "tasks" and isinstance(chunk, dict):
            self._task(chunk)
        elif mode == "updates" and isinstance(chunk, dict):
            for node, update in chunk.items():
                self._update(node, update or {})

    # ------------------------------------------------------------ events

    def index_progress(self, done: int, total: int) -> None:
        """A corpus's vectors being built (the first session on it): a progress bar on a terminal; otherwise a line
        at the start, at each ``index_every`` of the corpus (5 %) or after ``index_every_s`` seconds (60) without
        one, whichever comes first, and at the end; ``{"event": "index", "done", "total"}`` in jsonl."""
        if self.style == "jsonl":
            if done in (0, total) or done % 1024 < 16:
                self._emit({"event": "index", "done": done, "total": total})
            return
        if self.header is not None:
            header, self.header = self.header, None
            self._rich.print(printable(header), markup=False)
        what = f"indexing the corpus by meaning (once): {{}} / {total:,} documents"
        if not self._rich.is_terminal:
            now = time.monotonic()
            if done >= self._index_next or done >= total or now - self._index_at >= self.index_every_s:
                self._rich.print(what.format(f"{done:,}"), markup=False)
                step = max(1, math.ceil(total * self.index_every))
                self._index_next, self._index_at = (done // step + 1) * step, now
            return
        if self._bar is None:
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn  # rich: as above

            self._bar = Progress(
                TextColumn("indexing the corpus by meaning (once)"),
                BarColumn(),
                TextColumn("{task.completed:,}/{task.total:,} documents"),
                TimeRemainingColumn(),
                console=self._rich,
                transient=True,
            )
            self._bar.start()
            self._bar_task = self._bar.add_task("index", total=total)
        if self._bar_task is not None:  # set with the bar
            self._bar.update(self._bar_task, completed=done)
        if done >= total:
            self._bar.stop()
            self._bar = None
            self._rich.print(what.format(f"{total:,}"), markup=False)

    def _custom(self, ev: dict) -> None:
        kind = ev.get("event")
        if self.style == "jsonl":
            self._emit(ev)
            if kind == "round":
                self._remember(ev)
            return
        self._see_round(ev.get("round"))
        if kind == "search":
            self._found[ev["round"]] = f"{ev.get('new', 0)} new / {ev.get('total', 0)} results"
            self._spin(self._step_line())
        elif kind == "round":
            self._round_line(ev)

    def _task(self, ev: dict) -> None:
        """A task starts (``input``) or finishes (``result``/``error``): the spinner follows the starts."""
        if self.style == "jsonl" or "input" not in ev or str(ev.get("name", "")).startswith("__"):
            return
        name = ev.get("name") or "?"
        meta = ev.get("metadata") or {}
        if "step" not in meta:
            meta = {**self.node_metadata().get(name, {}), **meta}
        self._step = (str(meta.get("step") or name), meta.get("part"))
        self._spin(self._step_line())

    def _update(self, node: str, update: dict) -> None:
        if node.startswith("__"):
            return
        rnd = update.get("round")
        self._see_round(rnd if isinstance(rnd, int) else (update.get("current") or {}).get("round"))
        for rec in update.get("records") or []:  # a decided round; fallback when no custom event announced it
            if rec.get("decision") and rec.get("round") not in self._printed:
                ev = {"event": "round", **rec, "threshold": self.threshold}
                if self.style == "jsonl":
                    self._emit(ev)
                    self._remember(ev)
                else:
                    self._round_line(ev)
        pages = self._page_counts(update.get("pages") or []) if "pages" in update else None
        if self.style == "jsonl":
            ev: dict = {"event": "step", "node": node}
            if pages is not None:
                ev.update(pages)
            if update.get("result"):
                r = update["result"]
                ev.update(outcome=r.get("outcome"), rounds=r.get("rounds"), sources=len(r.get("sources") or []))
            self._emit(ev)
            return
        if pages is not None:
            extra = f", {pages['page_errors']} failed" if pages["page_errors"] else ""
            self._print([(f"{node}: {pages['stored']} page(s) kept, {pages['skipped']} skipped{extra}", "dim")])

    # ------------------------------------------------------------ the running step

    def node_metadata(self) -> dict[str, dict]:
        """Each node's metadata, from the compiled graph (read once, only if a task event brought none)."""
        if self._metadata is None:
            self._metadata = node_metadata(self._graph)
        return self._metadata

    def _see_round(self, rnd: Any) -> None:
        if isinstance(rnd, int) and not isinstance(rnd, bool) and (self._round is None or rnd > self._round):
            self._round = rnd

    def _step_line(self) -> str:
        """``round 2: scoring novelty (4 new / 5 results)``; a round step after the round was decided
        (merging it, planning the next) is ``after round 2: …``; other steps are their text alone."""
        step, part = self._step or ("", ROUND_PART)
        rnd = self._round
        if part != ROUND_PART or rnd is None:
            return step
        if rnd in self._printed:
            return f"after round {rnd}: {step}"
        found = self._found.get(rnd)
        if not step:
            return f"round {rnd}: {found or ''}".rstrip()
        return f"round {rnd}: {step}" + (f" ({found})" if found else "")

    @staticmethod
    def _page_counts(pages: list[dict]) -> dict:
        return {
            "stored": sum(1 for p in pages if p.get("status") in ("stored", "fetched")),
            "skipped": sum(1 for p in pages if p.get("status") == "skipped"),
            "page_errors": sum(1 for p in pages if p.get("status") == "error"),
        }

    def _remember(self, ev: dict) -> None:
        self._printed.add(ev.get("round"))
        self.rounds.append(ev)

    # ------------------------------------------------------------ output

    def _round_line(self, ev: dict) -> None:
        if ev.get("round") in self._printed:
            return
        self._remember(ev)
        self._print(round_parts(ev, self.task))

    def _print(self, parts: list[tuple[str, str]]) -> None:
        from rich.text import Text  # as above

        text = Text()
        for s, style in parts:
            text.append(s, style=style or None)
        self._rich.print(text)

    def _spin(self, message: str) -> None:
        if self.style != "rich" or not message:
            return
        self.status = message
        if not self._rich.is_terminal:
            return
        if self._status is None:
            self._status = self._rich.status(message, spinner="dots")
            self._status.start()
        else:
            self._status.update(message)

    def _emit(self, ev: dict) -> None:
        out = self.file or sys.stderr
        out.write(json.dumps(_jsonable(ev), ensure_ascii=False) + "\n")
        out.flush()


def make_progress(args, task: str = "") -> Progress | None:
    """The CLI's progress handler: ``--events`` → JSON lines, ``--json``/``--quiet`` → none, else rich. ``task`` as
    the user gave it (its whitespace collapsed here, as the session holds it: gap queries are shown against it)."""
    task = " ".join((task or "").split())
    if getattr(args, "events", False):
        return Progress(task=task, style="jsonl")
    if getattr(args, "json", False) or getattr(args, "quiet", False):
        return None
    return Progress(task=task)
