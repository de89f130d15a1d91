"""Secrets in messages (issue 36): a database URL's password never appears, whole or in part, in what a command
prints — whatever the setting's origin (flag, environment, Python) and whatever the password holds (``%``, ``@``,
``#``, quotes, query-string and conninfo forms)."""

from __future__ import annotations

import pytest

from saturate.cli import main
from saturate.state.errors import BadInput
from saturate.state.settings import load_settings, mask_url, scrub_password

PASSWORDS = [
    "Zq7hunterX9",
    "Pq%4@sW@w0Rd",
    "M#?%Kx7Vv",
    "Ab'cD\"eF9",
    "Kw/Zx/Qv81",
    "Jq?x=1&yW",
    "Hb%zz%Xk",
    "@@Lq8Vead",
    "Tz9ail@@",
    "%41%42Xq9",
    "Ss pace Q9",
    "Pä§wörð7",
]


def forms(password: str) -> list[str]:
    """Database URLs carrying ``password``: in the user part (bad scheme and good), in the query, as conninfo."""
    return [
        f"mysql://bob:{password}@db.example:5432/saturate",  # refused by the settings
        f"postgresql://bob:{password}@127.0.0.1:1/saturate",  # accepted, then the server cannot be reached
        f"postgresql://bob@127.0.0.1:1/saturate?password={password}",
        "host=127.0.0.1 port=1 password='{}' dbname=x".format(password.replace("\\", "\\\\").replace("'", "\\'")),
    ]


def pieces(password: str, size: int = 4) -> set[str]:
    return {password[i : i + size] for i in range(len(password) - size + 1)}


def leaked(password: str, text: str) -> list[str]:
    return sorted(p for p in pieces(password) | {password} if p in text)


@pytest.mark.parametrize("password", PASSWORDS)
def test_mask_url_and_scrub_keep_no_piece_of_a_password(password):
    for url in forms(password):
        assert not leaked(password, mask_url(url)), (url, mask_url(url))
        driver = f'could not parse "{url}": invalid percent-encoded token: "{password[2:6]}" near "{password[-5:]}"'
        assert not leaked(password, scrub_password(driver, url)), scrub_password(driver, url)


@pytest.mark.parametrize("password", PASSWORDS)
def test_a_bad_database_url_from_python_names_the_setting_and_hides_the_password(password):
    for url in forms(password)[:1] + forms(password)[3:]:
        with pytest.raises(BadInput) as err:
            load_settings({"database_url": url}, env={})
        assert "database_url" in str(err.value) and not leaked(password, str(err.value)), str(err.value)
        with pytest.raises(BadInput) as err:
            load_settings({}, env={"SATURATE_DATABASE_URL": url})
        assert "SATURATE_DATABASE_URL" in str(err.value) and not leaked(password, str(err.value)), str(err.value)


@pytest.mark.parametrize("origin", ["flag", "environment"])
@pytest.mark.parametrize("command", [["settings"], ["research", "a question"], ["verify", "a claim is true"]])
def test_no_command_prints_a_password_of_the_database_url(home, monkeypatch, capsys, origin, command):
    for password in PASSWORDS:
        for url in forms(password):
            if origin == "flag":
                code = main(["--database-url", url, *command])
            else:
                monkeypatch.setenv("SATURATE_DATABASE_URL", url)
                code = main(command)
                monkeypatch.delenv("SATURATE_DATABASE_URL")
            out = capsys.readouterr()
            text = out.out + out.err
            assert code in (0, 1, 2) and "Traceback" not in text, (url, code, text)
            assert not leaked(password, text), (url, leaked(password, text), text)


def test_masking_and_scrubbing_a_huge_value_end(tmp_path):
    """The fuzz of issue 36 hung on a 100,000-character value: the conninfo and mail patterns backtracked over it
    (quadratic). Each call must end; the bound (60 s) only catches a hang, it is no speed target."""
    import threading

    from saturate.state.text import scrub_urls

    values = ["a" * 200_000, "a" * 200_000 + "@x.com", "password=" + "b" * 200_000, "[" * 50_000]
    finished: list[int] = []

    def run() -> None:
        for value in values:
            mask_url(value)
            scrub_password(value, f"postgresql://u:{value}@h/db")
            scrub_urls(value)
            finished.append(1)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(60)
    assert len(finished) == len(values), "masking or scrubbing a long value did not end"
