"""Time travel: a session's checkpoints, and forks from a round with changed settings.

Every step of a session is a checkpoint (``graph.get_state_history``). A fork
starts a **new** session from the checkpoint where round N is complete and
round N+1 is about to be planned:

- the checkpoint whose next node is ``plan_query`` and whose round is N: the one
  written after round N's ``compress`` (or after ``decide`` when a claim sends the
  session back for more search). Round N's results are merged, the knowledge
  state updated, the records of rounds 1..N and the ε generator state (seed,
  draws) are as they were;
- ``--round 0`` is the checkpoint before round 1 (nothing searched yet).

A round that ended the session (``stop``, ``cap``) has no such checkpoint:
fork from the round before it to re-run it with the new settings.

How: the checkpoints of the original thread from its start up to that point
(and their pending writes) are copied into the new thread, the new settings are
written with ``update_state(..., as_node=<the node that wrote that checkpoint>)``
(so the graph's own edge from that node routes to ``plan_query`` again), then the new thread runs to the end
like a resumed session. The original thread is only read; its history is
unchanged. The fork's checkpoint metadata records where it came from
(``forked_from``, ``fork_round``, ``fork_checkpoint``, ``fork_changes``).
"""

from __future__ import annotations

import json
import os
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START

from saturate.graph import storage
from saturate.graph.api import resume
from saturate.graph.build import build_graph
from saturate.graph.paths import home_dir
from saturate.graph.session import InputError, cache, config, graph_for, kind_of, open_checkpointer, unknown_thread
from saturate.sources import make_source
from saturate.state.records import AgentResult
from saturate.state.settings import Settings, SettingsError

_BUILDER = build_graph().builder
# the node each round starts with (START's edge), and the round node whose router leads back to it (used as
# update_state's as_node when the writer of a fork point is not recorded): both read from the graph
ROUND_ENTRY = dict(_BUILDER.edges)[START]
FALLBACK_WRITER = next(
    name
    for name, branches in _BUILDER.branches.items()
    if (_BUILDER.nodes[name].metadata or {}).get("part") == "round"
    and any(ROUND_ENTRY in (b.ends or {}).values() for b in branches.values())
)


def branch(graph, thread_id: str) -> list:
    """The thread's checkpoints on its current branch (the latest and its ancestors), oldest first."""
    snaps = list(graph.get_state_history(config(thread_id)))
    if not snaps:
        return []
    by_id = {s.config["configurable"]["checkpoint_id"]: s for s in snaps}
    out, cur = [], snaps[0]
    while cur is not None:
        out.append(cur)
        parent = (cur.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        cur = by_id.get(parent)
    return out[::-1]


def _node_of(snap, parent) -> str:
    """Which step wrote this checkpoint: the node(s) its parent was about to run, 'input' or 'update'."""
    source = (snap.metadata or {}).get("source")
    if source == "input":
        return "input"
    if source == "update":
        return "update" + (" (fork)" if (snap.metadata or {}).get("forked_from") else "")
    if parent is not None and parent.next:
        return ",".join(parent.next)
    return source or ""


def fork_round_of(snap) -> int | None:
    """N when this checkpoint is the start of round N+1 (a fork point), else None."""
    if tuple(snap.next) == (ROUND_ENTRY,) and snap.values:
        return int(snap.values.get("round") or 0)
    return None


def checkpoint_rows(snaps: list) -> list[dict]:
    """One row per checkpoint: id, step, which node wrote it, next, round, decision, sizes, time."""
    rows = []
    for i, snap in enumerate(snaps):
        v = snap.values or {}
        recs = v.get("records") or []
        cur = v.get("current") or {}
        meta = snap.metadata or {}
        rows.append(
            {
                "checkpoint_id": snap.config["configurable"]["checkpoint_id"],
                "parent_id": (snap.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
                "step": meta.get("step"),
                "source": meta.get("source"),
                "node": _node_of(snap, snaps[i - 1] if i else None),
                "next": list(snap.next),
                "round": cur.get("round", v.get("round", 0)) or 0,
                "rounds_done": len(recs),
                "decision": recs[-1].get("decision") if recs else None,
                "knowledge_chars": len(v.get("knowledge") or ""),
                "accepted": len(v.get("results") or {}),
                "created_at": snap.created_at,
                "fork_round": fork_round_of(snap),
                "copied_from": meta.get("copied_from"),
                "forked_from": meta.get("forked_from"),
            }
        )
    return rows


def list_checkpoints(
    thread_id: str, home: str | os.PathLike | None = None, database_url: str | None = None
) -> list[dict]:
    """The checkpoints of a session, oldest first (raises InputError for an unknown thread)."""
    home_path = home_dir(home, create=False)
    with storage.using(database_url), open_checkpointer(home_path, readonly=True) as saver:
        # read with the graph that wrote it: the single loop's would not know a multi-source thread's nodes
        kind = kind_of(saver, thread_id) if saver is not None else None
        snaps = branch(graph_for(kind, saver), thread_id) if kind is not None else []
        if not snaps:
            raise unknown_thread(thread_id, home_path)
    return checkpoint_rows(snaps)


def fork_origin(snaps: list) -> dict | None:
    """Where a forked session came from (from its checkpoint metadata), else None."""
    for snap in snaps:
        meta = snap.metadata or {}
        if meta.get("forked_from"):
            changes = meta.get("fork_changes")
            try:
                changes = json.loads(changes) if isinstance(changes, str) else (changes or {})
            except (ValueError, RecursionError):
                changes = {}
            return {
                "thread": meta["forked_from"],
                "round": meta.get("fork_round"),
                "checkpoint_id": meta.get("fork_checkpoint"),
                "changes": changes,
            }
    return None


def validate_changes(old: Settings, overrides: dict[str, Any], round_n: int) -> tuple[Settings, dict]:
    """The new settings (SettingsError when invalid) and {name: [old, new]} for what changed."""
    new = old.replace(**overrides)
    if new.mode == "saturate" and new.max_rounds <= round_n:
        raise SettingsError(
            f"invalid settings: max_rounds ({new.max_rounds}) must be above the fork round ({round_n}): "
            f"the fork runs round {round_n + 1} next"
        )
    if new.mode == "fixed" and new.fixed_rounds <= round_n:
        raise SettingsError(
            f"invalid settings: fixed_rounds ({new.fixed_rounds}) must be above the fork round ({round_n}): "
            f"the fork runs round {round_n + 1} next"
        )
    before, after = old.model_dump(), new.model_dump()
    return new, {k: [before[k], after[k]] for k in after if before[k] != after[k]}


def fork(
    thread_id: str,
    round: int,
    *,
    new_thread: str | None = None,
    home: str | os.PathLike | None = None,
    chat_model: Any = None,
    source: Any = None,
    stream_handler=None,
    database_url: str | None = None,
    **overrides: Any,
) -> tuple[str, AgentResult, dict]:
    """Fork ``thread_id`` after round ``round`` with changed settings and run the fork to the end.

    Returns (new thread id, its result, {setting: [old, new]}). Raises InputError
    (unknown thread, no such fork point, existing new thread) or SettingsError.
    """
    with storage.using(database_url):
        return _fork(thread_id, round, new_thread, home, chat_model, source, stream_handler, overrides)


def _fork(
    thread_id: str,
    round: int,
    new_thread: str | None,
    home: str | os.PathLike | None,
    chat_model: Any,
    source: Any,
    stream_handler,
    overrides: dict[str, Any],
):
    home_path = home_dir(home)
    new_thread = new_thread or f"{thread_id}-fork{round}-{os.urandom(2).hex()}"
    with open_checkpointer(home_path) as saver:
        kind = kind_of(saver, thread_id)
        if kind is None:
            raise unknown_thread(thread_id, home_path)
        if kind == "multi":
            raise InputError(f"thread {thread_id!r} is a multi-source session: fork covers single-loop sessions")
        graph = graph_for(kind, saver)
        snaps = branch(graph, thread_id)
        points = {n: s for s in snaps if (n := fork_round_of(s)) is not None}
        if round not in points:
            recs = snaps[-1].values.get("records") or []
            last = next((r for r in recs if r["round"] == round), None)
            if recs and snaps[0].parent_config is None and (snaps[0].metadata or {}).get("step", -1) > 0:
                why = "its history was removed by `saturate prune --compact` (only its final state is kept)"
            elif last is not None:
                why = (
                    f"round {round} ended the session ({last.get('decision')}), so no round {round + 1} starts from it"
                )
            else:
                why = f"the session has no round {round}"
            valid = ", ".join(str(n) for n in sorted(points)) or "none"
            raise InputError(f"cannot fork {thread_id!r} after round {round}: {why}. Fork points (--round): {valid}")
        if graph.get_state(config(new_thread)).values:
            raise InputError(f"thread {new_thread!r} already exists; pick another --thread")
        point = points[round]
        writer = _writer(snaps, snaps.index(point))
        old = Settings.model_validate(point.values["settings"])
        new, changes = validate_changes(old, overrides, round)
        if source is None:  # a missing corpus etc. fails here, before the new thread exists
            make_source(new, home_path, cache(storage.database_url(), home_path)).close()
        point_id = point.config["configurable"]["checkpoint_id"]
        try:
            _copy_chain(saver, thread_id, new_thread, point_id)
            update: dict[str, Any] = {"settings": new.model_dump()}
            if "seed" in changes and new.seed is not None:  # a new seed restarts the ε generator's stream
                update["rng"] = {"seed": new.seed, "draws": point.values["rng"]["draws"]}
            cfg: RunnableConfig = {
                **config(new_thread),
                "metadata": {
                    "forked_from": thread_id,
                    "fork_round": round,
                    "fork_checkpoint": point_id,
                    "fork_changes": json.dumps(changes),
                    "fork_as_node": writer,
                },
            }
            graph.update_state(cfg, update, as_node=writer)
        except BaseException:
            saver.delete_thread(new_thread)
            raise
    result = resume(new_thread, home=home_path, chat_model=chat_model, source=source, stream_handler=stream_handler)
    return new_thread, result, changes


def _writer(snaps: list, i: int) -> str:
    """The node whose step wrote checkpoint i (for update_state's as_node)."""
    meta = snaps[i].metadata or {}
    if meta.get("source") == "update":
        return meta.get("fork_as_node") or FALLBACK_WRITER
    if i > 0 and len(snaps[i - 1].next) == 1:
        return snaps[i - 1].next[0]
    return FALLBACK_WRITER


def _copy_chain(saver, src: str, dst: str, upto_id: str) -> None:
    """Copy the checkpoints from the thread's start to ``upto_id`` (and their pending writes) into ``dst``."""
    tuples = {
        t.config["configurable"]["checkpoint_id"]: t
        for t in saver.list({"configurable": {"thread_id": src, "checkpoint_ns": ""}})
    }
    chain, cur = [], tuples.get(upto_id)
    while cur is not None:
        chain.append(cur)
        parent = (cur.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        cur = tuples.get(parent)
    parent_id = None
    for tup in reversed(chain):
        cfg = {
            "configurable": {
                "thread_id": dst,
                "checkpoint_ns": "",
                **({"checkpoint_id": parent_id} if parent_id else {}),
            }
        }
        meta = {**(tup.metadata or {}), "copied_from": src}
        saved = saver.put(cfg, tup.checkpoint, meta, tup.checkpoint.get("channel_versions", {}))
        cid = saved["configurable"]["checkpoint_id"]
        if cid != upto_id:  # writes of the fork point belong to the original's next step: not copied
            by_task: dict[str, list] = {}
            for task_id, channel, value in tup.pending_writes or []:
                by_task.setdefault(task_id, []).append((channel, value))
            for task_id, writes in by_task.items():
                saver.put_writes(saved, writes, task_id)
        parent_id = cid
