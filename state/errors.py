"""The one base class of errors caused by bad user input.

A bad setting, task, corpus, thread id, model or monitor operation raises a subclass of
``BadInput`` whose message says in one line what is wrong and what to do. The CLI catches
``BadInput`` alone (exit 2); this module imports nothing, so catching it costs nothing, while
the modules that raise its subclasses may import LangGraph.
"""


class BadInput(ValueError):
    """Bad input from the user; the message is one line that names what is wrong and why."""
