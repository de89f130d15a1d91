"""What a task must be to start a session: checked before anything heavy is imported or opened.

The CLI checks the task first thing (an empty task is refused in a fraction of a second, not after LangGraph and the
models load); the API checks it again (``graph.session.check_task``), since Python callers come in there.
"""

from __future__ import annotations

from saturate.state.errors import BadInput
from saturate.state.text import has_control_characters, printable, terms


class TaskError(BadInput):
    """A task that cannot be researched (empty, not text, no searchable word, control characters, too long)."""


def checked_task(task: object, max_chars: int) -> str:
    """The task with its whitespace collapsed; ``TaskError`` with one line saying what is wrong otherwise."""
    if task is None or not str(task).strip():
        raise TaskError('the task is empty: say what to research, e.g. saturate research "Who built the Eiffel Tower?"')
    task = " ".join(str(task).split())
    if any("\ud800" <= ch <= "\udfff" for ch in task):  # bytes that were not UTF-8 (argv's surrogate escapes)
        raise TaskError(
            f"the task {printable(task[:60].encode('utf-8', 'replace').decode())!r} is not valid UTF-8 text: "
            "give it in UTF-8"
        )
    if not terms(task):
        raise TaskError(
            f"the task {task[:60]!r} has no searchable word (only stopwords, punctuation or single letters): "
            'say what to research, e.g. saturate research "Who built the Eiffel Tower?"'
        )
    if has_control_characters(task):
        raise TaskError(
            f"the task {printable(task[:60])!r} has control characters (terminal escapes, bidi overrides): "
            "give it as plain text"
        )
    if len(task) > max_chars:
        raise TaskError(
            f"the task is {len(task)} characters long; the limit is {max_chars} "
            "(task_max_chars / SATURATE_TASK_MAX_CHARS). Shorten it or raise the limit."
        )
    return task
