"""A throwaway PostgreSQL for the tests and ``saturate bench batch``: Debian's server binaries, a cluster in a
temporary directory on a loopback port (no server of the user's is touched).

PostgreSQL refuses to run as root, so as root the cluster belongs to the ``postgres`` system user and its
commands run through ``runuser``; as anyone else they run as that user. Where no server can be started
(no binaries, no ``postgres`` user as root), ``start`` raises ``Unavailable`` with the reason, and the
tests that need it are skipped showing it.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass


class Unavailable(Exception):
    pass


@dataclass
class Server:
    bin: str
    data: str
    port: int
    as_user: list[str]

    def url(self, db: str = "saturate", password: str | None = None) -> str:
        auth = f"saturate:{password}@" if password else "saturate@"
        return f"postgresql://{auth}127.0.0.1:{self.port}/{db}"

    def createdb(self, name: str) -> str:
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "saturate", name)
        return self.url(name)

    def stop(self) -> None:
        self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(os.path.dirname(self.data), ignore_errors=True)

    def _run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [*self.as_user, os.path.join(self.bin, tool), *args], capture_output=True, text=True, timeout=120
        )
        if check and done.returncode != 0:
            raise Unavailable(f"{tool} failed: {(done.stderr or done.stdout).strip()[:300]}")
        return done


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(fsync: bool = True) -> Server:
    """A running cluster with a database ``saturate`` (user ``saturate``, trust auth on 127.0.0.1). ``fsync=False``
    (the tests) trades crash safety of the cluster for speed; the benchmark keeps PostgreSQL's defaults."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    initdb = found[-1] if found else shutil.which("initdb")
    if not initdb:
        raise Unavailable("no PostgreSQL server binaries (apt-get install postgresql)")
    as_user: list[str] = []
    root = tempfile.mkdtemp(prefix="saturate-pg-")
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            raise Unavailable("running as root and there is no 'postgres' user to run PostgreSQL as") from None
        runuser = shutil.which("runuser")
        if not runuser:
            raise Unavailable("running as root and runuser is missing")
        os.chown(root, user.pw_uid, user.pw_gid)
        as_user = [runuser, "-u", "postgres", "--"]
    data = os.path.join(root, "data")
    server = Server(os.path.dirname(initdb), data, free_port(), as_user)
    server._run("initdb", "-D", data, "-U", "saturate", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")
    opts = f"-p {server.port} -k {root} -c listen_addresses=127.0.0.1 -c max_connections=60" + (
        "" if fsync else " -c fsync=off"
    )
    server._run("pg_ctl", "-D", data, "-o", opts, "-l", os.path.join(root, "log"), "-w", "start")
    for _ in range(50):
        if server._run("pg_isready", "-h", "127.0.0.1", "-p", str(server.port), check=False).returncode == 0:
            break
        time.sleep(0.1)
    server.createdb("saturate")
    return server
