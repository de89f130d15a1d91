"""Input an adversarial review found unchecked, each now one line and exit 2 (or the project's BadInput from Python)
where it was a traceback, a silent acceptance or a misleading message: server URLs with a bad port or host, paths
that cannot be resolved (``~user`` of no user, a symbolic link loop), negative benchmark counts, booleans for
numbers, ``Settings(...)``'s own error, MCP arguments and ports, a report that does not fit on the disk, and the
index folder's message."""

from __future__ import annotations

import argparse
import socket
from pathlib import Path

import anyio
import pytest
from mcp.client import Client
from mcp.types import TextContent

from saturate import Settings, research
from saturate.cli import main
from saturate.graph.model_servers import ModelUnavailable, ollama_host, ollama_tags, openai_base_url
from saturate.graph.paths import DataDirError
from saturate.mcp import build_server, check_allowed_sources
from saturate.sources.local import CorpusError
from saturate.state.argtypes import at_least, non_negative_float, positive_int
from saturate.state.errors import BadInput
from saturate.state.files import user_path
from saturate.state.settings import SettingsError, check_http_url, load_settings

NO_USER = "~saturate-no-such-user-0"  # a ~name that names no user: pathlib raised RuntimeError for it
TASK = "What is water?"
URL_SETTINGS = ("searxng_url", "openai_base_url", "ollama_host")
BAD_URLS = (
    "http://h:abc",
    "http://[::1",
    "http://h:0",
    "http://h:70000",
    "http://:80",
    "http://[::1]x/",
    "http://h:-1",
)


def one_error_line(err: str) -> str:
    """The one line a refusal prints (no traceback)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def loop(tmp_path, monkeypatch) -> Path:
    """``l1`` and ``l2``, two symbolic links to each other, in the working directory."""
    monkeypatch.chdir(tmp_path)
    Path("l1").symlink_to("l2")
    Path("l2").symlink_to("l1")
    return Path("l1")


# --- 1. server URLs: the port and host are checked before httpx sees them ----------------------------------------


@pytest.mark.parametrize("name", URL_SETTINGS)
@pytest.mark.parametrize("url", BAD_URLS)
def test_a_server_url_with_a_bad_port_or_host_is_a_settings_error(name, url):
    with pytest.raises(SettingsError, match=f"^invalid settings: {name}: "):
        load_settings({name: url}, env={})


@pytest.mark.parametrize("url", ("http://127.0.0.1:1234/v1", "http://[::1]:8080", "https://example.org", "http://h:"))
def test_usable_server_urls_still_pass(url):
    assert check_http_url(url) == url
    assert load_settings({"ollama_host": url}, env={}).ollama_host == url


@pytest.mark.parametrize(
    "flags",
    [
        ["--model", "ollama:x", "--ollama-host", "http://h:abc"],
        ["--model", "ollama:x", "--ollama-host", "http://[::1"],
        ["--model", "openai:x", "--openai-base-url", "http://h:abc/v1"],
        ["--embed-model", "ollama:x", "--ollama-host", "http://h:abc"],
        ["--embed-model", "openai:x", "--openai-base-url", "http://[::1/v1"],
        ["--model", "ollama:x", "--ollama-host", "http://h:abc", "--on-model-error", "heuristic"],
        ["--source", "searxng", "--searxng-url", "http://h:abc"],
    ],
)
def test_a_bad_server_url_on_the_command_line_is_one_line_and_exit_2(home, capsys, flags):
    assert main(["research", TASK, *flags]) == 2
    assert "invalid settings: " in one_error_line(capsys.readouterr().err)


def test_ollamas_own_variable_is_checked_too(monkeypatch):
    """OLLAMA_HOST and OPENAI_BASE_URL are not settings: the servers' module checks them, naming the variable."""
    monkeypatch.setenv("OLLAMA_HOST", "http://[::1")
    with pytest.raises(ModelUnavailable, match="^OLLAMA_HOST 'http://\\[::1': "):
        ollama_host(load_settings({"model": "ollama:x"}, env={}))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://h:abc/v1")
    with pytest.raises(ModelUnavailable, match="^OPENAI_BASE_URL "):
        openai_base_url(load_settings({"model": "openai:x"}, env={}))


def test_ollama_host_variable_bad_on_the_command_line(home, capsys, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://[::1")
    assert main(["research", TASK, "--model", "ollama:x"]) == 2
    assert "OLLAMA_HOST" in one_error_line(capsys.readouterr().err)


def test_httpx_invalid_url_is_no_traceback_at_the_probe():
    """The last guard: httpx.InvalidURL is no httpx.HTTPError, and escaped the probe's except."""
    with pytest.raises(ModelUnavailable, match="cannot reach Ollama"):
        ollama_tags("http://h:abc")


# --- 2. paths that cannot be resolved --------------------------------------------------------------------------


def test_user_path_turns_pathlibs_runtime_errors_into_bad_input(loop):
    with pytest.raises(BadInput, match="names no user's home directory"):
        user_path(f"{NO_USER}/x.jsonl", "corpus", BadInput)
    with pytest.raises(BadInput, match="symbolic link loop"):
        user_path(loop, "corpus", BadInput, resolve=True)
    with pytest.raises(BadInput, match="symbolic link loop"):
        user_path(loop / "below", "corpus", BadInput)
    assert user_path("~/x", "corpus", BadInput) == Path.home() / "x"
    assert user_path("missing.jsonl", "corpus", BadInput, resolve=True).is_absolute()  # missing: the caller says


@pytest.mark.parametrize(
    "argv",
    [
        ["research", TASK, "--model", f"gguf:{NO_USER}/x.gguf"],
        ["research", TASK, "--corpus", f"{NO_USER}/x.jsonl"],
        ["research", TASK, "--home", f"{NO_USER}/h"],
        ["research", TASK, "--sources", f"local:{NO_USER}/x.jsonl"],
        ["research", TASK, "--corpus", "l1"],
        ["research", TASK, "--sources", "local:l1"],
        ["research", TASK, "--home", "l1"],
        ["runs", "--home", "l1"],
        ["--home", "l1", "runs"],
    ],
)
def test_an_unresolvable_path_is_one_line_and_exit_2(home, loop, capsys, argv):
    assert main(argv) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "no user's home directory" in line or "symbolic link loop" in line


def test_unresolvable_paths_from_the_environment(home, loop, capsys, monkeypatch):
    monkeypatch.setenv("SATURATE_HOME", f"{NO_USER}/h")
    assert main(["runs"]) == 2
    assert "SATURATE_HOME" in one_error_line(capsys.readouterr().err)
    monkeypatch.setenv("SATURATE_HOME", str(home))
    monkeypatch.setenv("SATURATE_GGUF_CACHE", f"{NO_USER}/c")
    assert main(["research", TASK, "--model", "gguf:smollm2"]) == 2
    assert "SATURATE_GGUF_CACHE" in one_error_line(capsys.readouterr().err)


def test_unresolvable_paths_from_python_are_bad_input(home, loop):
    with pytest.raises(DataDirError):
        research(TASK, home=f"{NO_USER}/x")
    with pytest.raises(CorpusError):
        research(TASK, corpus=f"{NO_USER}/x")
    with pytest.raises(CorpusError, match="symbolic link loop"):
        research(TASK, corpus="l1")


def test_bench_with_a_corpus_in_a_loop(home, loop, capsys):
    Path("t.jsonl").write_text('{"id": "1", "question": "What is water?", "answers": ["water"]}\n')
    assert main(["bench", "natural", "--tasks", "t.jsonl", "--corpus", "l1"]) == 2
    assert "symbolic link loop" in one_error_line(capsys.readouterr().err)


# --- 3. benchmark counts and durations -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, said",
    [
        (["bench", "model", "--tasks", "-1"], "argument --tasks: must be 1 or more, not -1"),
        (["bench", "model", "--latency-ms", "-5"], "argument --latency-ms: must be 0 or more, not -5"),
        (["bench", "model", "--latency-ms", "nan"], "argument --latency-ms: not a finite number"),
        (["bench", "multi", "--latency-ms", "-1"], "argument --latency-ms: must be 0 or more"),
        (["bench", "verify", "--cv", "-2"], "argument --cv: must be 0 or more"),
        (["bench", "natural", "--seed", "-1"], "argument --seed: must be 0 or more"),
        (["bench", "batch", "--sessions", "0"], "argument --sessions: must be 1 or more"),
        (["bench", "real-model", "--musique", "-3"], "argument --musique: must be 0 or more"),
    ],
)
def test_negative_benchmark_numbers_are_refused_as_the_flags_are_parsed(home, capsys, argv, said):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert said in one_error_line(capsys.readouterr().err)


def test_at_least():
    assert positive_int("3") == 3 and non_negative_float("0") == 0.0 and at_least(2)("2") == 2
    for parse, text in ((positive_int, "0"), (positive_int, "1.5"), (non_negative_float, "-0.1"), (positive_int, "x")):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)


# --- 4, 5. booleans are no numbers; Settings(...) raises the project's error -------------------------------------


@pytest.mark.parametrize(
    "values",
    [
        {"max_rounds": True},
        {"novelty_epsilon": False},
        {"novelty_threshold": True},
        {"seed": True},
        {"source_ceilings": '{"local": true}'},
    ],
)
def test_a_boolean_is_no_number(values):
    with pytest.raises(SettingsError, match="not a boolean"):
        load_settings(values, env={})
    with pytest.raises(SettingsError, match="not a boolean"):
        Settings(**values)


def test_a_boolean_is_no_number_in_research(home):
    with pytest.raises(SettingsError, match="max_rounds: expected a number, not a boolean"):
        research(TASK, max_rounds=True)


def test_numbers_as_text_and_booleans_as_booleans_still_pass():
    s = load_settings({"max_rounds": "3", "novelty_epsilon": 1, "exclude_seen": True}, env={"SATURATE_SEED": "4"})
    assert (s.max_rounds, s.novelty_epsilon, s.exclude_seen, s.seed) == (3, 1.0, True, 4)


def test_settings_constructed_directly_raise_the_projects_error():
    """Settings is exported and documented as a way to pass settings (docs/python-api.md): its error is BadInput."""
    assert Settings(max_rounds=3).max_rounds == 3
    with pytest.raises(SettingsError, match="^invalid settings: max_rounds: "):
        Settings(max_rounds=0)
    with pytest.raises(SettingsError, match="bogus"):
        Settings(bogus=1)  # pyright: ignore[reportCallIssue]  (a type checker refuses it too)


# --- 6, 7. the MCP server: --allow-source, unknown arguments, a port in use -----------------------------------------


def test_allow_source_must_name_sources(home, capsys):
    assert check_allowed_sources(["local", " ddg,searxng "]) == {"local", "ddg", "searxng"}
    with pytest.raises(BadInput, match="--allow-source 'bogus'"):
        check_allowed_sources(["bogus"])
    assert main(["mcp", "--allow-source", "bogus"]) == 2
    assert "--allow-source 'bogus': not a source" in one_error_line(capsys.readouterr().err)


def test_mcp_tools_refuse_arguments_they_do_not_take(home):
    """``source`` beside ``task`` was dropped silently by the SDK: the server's source was used instead."""

    async def calls() -> list[tuple[bool, str]]:
        async with Client(build_server(home=str(home), allowed_sources=frozenset({"local"}))) as client:
            out = []
            for tool, args in (
                ("research", {"task": TASK, "source": "ddg"}),
                ("verify", {"claim": "Water is wet.", "corpus": "/etc/passwd"}),
                ("runs", {"all": True}),
                ("research", {"task": TASK, "settings": {"max_rounds": True}}),
            ):
                result = await client.call_tool(tool, args)
                block = result.content[0]
                assert isinstance(block, TextContent), block
                out.append((result.is_error, block.text))
            return out

    (r_err, r_text), (v_err, v_text), (runs_err, runs_text), (b_err, b_text) = anyio.run(calls)
    assert r_err and "unknown argument(s) 'source'" in r_text and "settings go inside" in r_text
    assert v_err and "unknown argument(s) 'corpus'" in v_text
    assert runs_err and "it takes no arguments" in runs_text
    assert b_err and "not a boolean" in b_text


def test_mcp_on_a_port_in_use_is_one_line_and_exit_2(home, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["mcp", "--http", "--no-token", "--port", str(port)]) == 2
    assert one_error_line(capsys.readouterr().err) == (
        f"saturate: error: port {port} is in use on 127.0.0.1: stop what listens there, or choose another --port"
    )


# --- 8. output paths ---------------------------------------------------------------------------------------------


@pytest.fixture
def finished(home) -> str:
    return research(TASK, thread_id="t1", max_rounds=1).thread_id


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
@pytest.mark.parametrize("flag", ["--html", "--md"])
def test_a_report_that_does_not_fit_says_so_not_resume(finished, capsys, flag):
    assert main(["show", finished, flag, "/dev/full"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith("saturate: error: cannot write /dev/full: ") and "resume" not in line


@pytest.mark.parametrize("flag", ["--html", "--md"])
def test_output_paths_get_their_missing_folders(finished, tmp_path, capsys, flag):
    """Every output path the user names is written the same way: its missing folders are made."""
    target = tmp_path / "new" / "folder" / "report"
    assert main(["show", finished, flag, str(target)]) == 0
    assert target.is_file()


# --- 9. the index folder's message -------------------------------------------------------------------------------


def test_an_index_that_is_a_file_is_said_of_the_data_directory(home, capsys):
    home.mkdir(parents=True)
    (home / "index").write_text("")
    assert main(["research", TASK]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "index folder" in line and "a file, not a folder" in line and "corpus" not in line
