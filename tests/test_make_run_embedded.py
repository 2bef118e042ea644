"""``make run`` on its embedded defaults: PostgreSQL and Redis from the wheels, owned by the run.

pytest-django runs against the test servers, so this test starts ``manage.py run_all`` itself
(what ``make run`` runs: servers, migrations, demo, web, worker and beat) with DATABASE_URL,
REDIS_URL and CELERY_BROKER_URL unset, a fresh TIDINGS_DATA_DIR and free ports, in a process
group of its own as a terminal would. It waits for the URLs to be printed (only once worker
and beat are healthy), speaks HTTP to it with the demo keys through every API write path,
runs ``delivery_selfcheck`` against it, watches the demo's journey and campaign finish on the
real worker, then presses Ctrl-C and looks for orphans. A second run on the same data finds
it again; the start-up errors a person can meet each come back as one line.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from apps.console.demo import SUBSCRIBERS as DEMO_SUBSCRIBERS
from config.embedded import free_port, port_is_free

BASE_DIR = Path(__file__).resolve().parents[1]
UNSET = ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "CACHE_KEY_PREFIX", "TIDINGS_TEST_DB_NAME", "DJANGO_DEBUG")
WAIT = 60.0
START_SECONDS = 240
logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per poll drowns a failure's report


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        TIDINGS_DATA_DIR=str(data_dir),
        TIDINGS_EMBEDDED_PG_PORT=str(free_port()),
        TIDINGS_EMBEDDED_REDIS_PORT=str(free_port()),
        TIDINGS_PORT=str(free_port()),
        PYTHONUNBUFFERED="1",  # the keys must reach the log at once
    )
    env.update(extra)
    return env


class Run:
    """One ``make run``: a process group of its own, its output in a log file."""

    def __init__(self, data_dir: Path, env: dict[str, str], log_name: str) -> None:
        self.data_dir, self.env = data_dir, env
        self.log = data_dir.parent / f"{data_dir.name}-{log_name}.log"
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "run_all"],
                cwd=BASE_DIR,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.base = f"http://127.0.0.1:{env['TIDINGS_PORT']}"

    def text(self) -> str:
        return self.log.read_text()

    def wait_running(self) -> dict[str, str]:
        deadline = time.monotonic() + START_SECONDS
        while "Tidings is running" not in self.text():
            assert self.process.poll() is None, self.text()
            assert time.monotonic() < deadline, self.text()
            time.sleep(0.3)
        time.sleep(0.2)  # the lines after the banner
        return dict(re.findall(r"^\s*(Public key|Secret key):\s*(\S+)", self.text(), re.MULTILINE))

    def ctrl_c(self) -> int:
        """What a terminal does: SIGINT to the whole foreground process group."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            raise

    def manage(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Another terminal beside the run, with the same (URL-less) environment."""
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=BASE_DIR,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


def _processes_of(data_dir: Path) -> list[str]:
    """Every live process started for this data folder (they all carry it in their environment)."""
    marker = f"TIDINGS_DATA_DIR={data_dir}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue  # gone meanwhile, or a zombie
    return found


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("make-run")


@pytest.fixture(scope="module")
def run(data_dir: Path) -> Iterator[Run]:
    started = Run(data_dir, _env(data_dir), "first")
    try:
        yield started
    finally:
        if started.process.poll() is None:
            started.ctrl_c()


@pytest.fixture(scope="module")
def tidings(run: Run) -> dict[str, Any]:
    keys = run.wait_running()
    return {"base": run.base, "log": run.log, "public_key": keys["Public key"], "secret_key": keys["Secret key"]}


class Api:
    def __init__(self, tidings: dict[str, Any], key: str) -> None:
        self.client = httpx.Client(
            base_url=tidings["base"] + "/api/v1", headers={"Authorization": f"Bearer {key}"}, timeout=30
        )
        self.log: Path = tidings["log"]

    def call(self, method: str, path: str, expect: int | tuple[int, ...] = (200, 201), **kwargs: Any) -> Any:
        response = self.client.request(method, path, **kwargs)
        wanted = expect if isinstance(expect, tuple) else (expect,)
        assert response.status_code in wanted, f"{method} {path}: {response.status_code} {response.text[:2000]}"
        return response.json()

    def until(self, path: str, done: Callable[[Any], bool]) -> Any:
        """Poll a read endpoint until the worker has finished what it describes."""
        deadline = time.monotonic() + WAIT
        while True:
            body = self.call("GET", path, expect=200)
            if done(body):
                return body
            assert time.monotonic() < deadline, f"{path} never finished: {body}\n{_errors(self.log)}"
            time.sleep(0.3)


def _errors(log: Path) -> str:
    """The log's tracebacks and errors, or its tail when it has none."""
    lines = log.read_text().splitlines()
    marks = [i for i, line in enumerate(lines) if "Traceback" in line or "ERROR" in line]
    if not marks:
        return "\n".join(lines[-60:])
    return "\n".join("\n".join(lines[i : i + 40]) for i in marks[:3])


@pytest.fixture(scope="module")
def public_api(tidings: dict[str, Any]) -> Api:
    return Api(tidings, tidings["public_key"])


@pytest.fixture(scope="module")
def api(tidings: dict[str, Any]) -> Api:
    return Api(tidings, tidings["secret_key"])


def test_identify_with_anonymous_merge_tags_device_and_segment(public_api: Api, api: Api) -> None:
    public_api.call("POST", "/subscribers/identify", json={"anonymous_id": "anon-1", "email": "anon@example.com"})
    public_api.call("POST", "/devices", json={"anonymous_id": "anon-1", "platform": "ios", "token": "tok-1"})
    merged = public_api.call("POST", "/subscribers/identify", json={"external_id": "u1", "anonymous_id": "anon-1"})
    again = public_api.call("POST", "/subscribers/identify", json={"external_id": "u1", "anonymous_id": "anon-1"})
    public_api.call("POST", "/subscribers/identify", json={"external_id": "u2", "email": "u2@example.com"})
    api.call("POST", "/subscribers/identify", json={"external_id": "u3", "email": "u3@example.com"})

    u1 = api.call("GET", "/subscribers/u1")
    assert merged["external_id"] == again["external_id"] == "u1"
    assert u1["email"] == "anon@example.com"
    assert [d["token"] for d in u1["devices"]] == ["tok-1"]
    # Later calls with the anonymous id resolve to the identified subscriber (a public key
    # learns only its id, never the external id behind the anonymous one).
    alias = public_api.call("POST", "/subscribers/identify", json={"anonymous_id": "anon-1"})
    assert alias["id"] == u1["id"] and alias["external_id"] is None

    tags = api.call("POST", "/subscribers/u1/tags", json={"add": ["vip", "beta"]})
    assert sorted(tags["tags"]) == ["beta", "vip"]
    api.call("POST", "/subscribers/u2/tags", json={"add": ["vip"]})
    assert api.call("POST", "/subscribers/u1/tags", json={"remove": ["beta"]})["tags"] == ["vip"]
    # Moving a device onto an identified subscriber is the server's (or a subscriber hash's) to do.
    moved = api.call("POST", "/devices", json={"external_id": "u2", "platform": "android", "token": "tok-1"})
    assert moved["subscriber"]["external_id"] == "u2"

    segment = api.call("POST", "/segments", json={"name": "VIPs", "rules": {"op": "and", "groups": [{"all": ["vip"]}]}})
    assert segment["count"] == 2
    api.call("POST", "/subscribers/u3/tags", json={"add": ["vip"]})
    # Membership follows tag changes incrementally, within the call that changed them.
    assert api.call("GET", f"/segments/{segment['id']}")["count"] == 3
    none_of = api.call(
        "POST", "/segments", json={"name": "Not VIP", "rules": {"op": "and", "groups": [{"none": ["vip"]}]}}
    )
    assert none_of["count"] == DEMO_SUBSCRIBERS  # u1, u2 and u3 all carry "vip" now
    members = api.call("GET", f"/segments/{segment['id']}/subscribers")
    assert sorted(m["external_id"] for m in members["results"]) == ["u1", "u2", "u3"]


def test_csv_import_lands_good_rows_and_reports_bad_ones(api: Api) -> None:
    csv = "external_id,email,tags\nimp-1,imp1@example.com,vip|imported\nimp-2,not-an-email,vip\nu3,,imported\n"
    job = api.call("POST", "/subscribers/import", files={"file": ("people.csv", csv.encode(), "text/csv")}, expect=202)
    done = api.until(f"/imports/{job['id']}", lambda body: body["status"] in ("succeeded", "failed"))

    assert (done["status"], done["rows_imported"], done["rows_failed"]) == ("succeeded", 2, 1), done
    assert done["errors"][0]["line"] == 3
    assert sorted(api.call("GET", "/subscribers/imp-1")["tags"]) == ["imported", "vip"]
    assert sorted(api.call("GET", "/subscribers/u3")["tags"]) == ["imported", "vip"]


def test_published_notification_is_sent_by_the_worker(api: Api) -> None:
    accepted = api.call(
        "POST", "/notifications", json={"template": "welcome", "channels": ["email"], "to": ["u1", "u2"]}, expect=202
    )
    path = f"/notifications/{accepted['id']}"
    body = api.until(
        path, lambda b: len(b.get("deliveries", [])) == 2 and all(d["state"] == "sent" for d in b["deliveries"])
    )

    assert sorted(d["destination"] for d in body["deliveries"]) == ["anon@example.com", "u2@example.com"]


def test_journey_start_tag_email_end_runs_to_completion(api: Api) -> None:
    graph = {
        "nodes": [
            {"id": "start", "type": "start", "config": {}},
            {"id": "mark", "type": "add_tag", "config": {"tags": ["journeyed"]}},
            {"id": "mail", "type": "email", "config": {"template": "welcome"}},
            {"id": "end", "type": "end", "config": {}},
        ],
        "edges": [
            {"from": "start", "handle": "next", "to": "mark"},
            {"from": "mark", "handle": "next", "to": "mail"},
            {"from": "mail", "handle": "next", "to": "end"},
        ],
    }
    api.call("POST", "/workflows", json={"key": "welcome-flow", "name": "Welcome", "graph": graph})
    api.call("POST", "/workflows/welcome-flow/publish", expect=201)
    execution = api.call("POST", "/workflows/welcome-flow/executions", json={"external_ids": ["u1", "u3"]}, expect=202)
    done = api.until(f"/executions/{execution['id']}", lambda body: body["state"] not in ("pending", "running"))

    assert done["state"] == "completed", done
    assert "journeyed" in api.call("GET", "/subscribers/u1")["tags"]
    assert "journeyed" in api.call("GET", "/subscribers/u3")["tags"]


def test_campaign_to_a_tag_runs_to_completion(api: Api) -> None:
    created = api.call(
        "POST", "/campaigns", json={"name": "Promo", "template": "welcome", "audience": {"kind": "tag", "tag": "vip"}}
    )
    api.call("POST", f"/campaigns/{created['id']}/start", expect=(200, 202))
    done = api.until(f"/campaigns/{created['id']}", lambda body: body["state"] in ("completed", "cancelled"))

    assert done["state"] == "completed", done
    # u1, u2, u3 and imp-1 carry "vip" and have an email address.
    assert (done["counters"]["total"], done["counters"]["sent"]) == (4, 4), done


def test_campaign_pause_resume_and_cancel_move_the_ledger(api: Api) -> None:
    # Slowly, to 100 of the demo's subscribers: still sending while it is paused and cancelled.
    people = [f"user-{i:04d}" for i in range(1, 101)]
    body = {"name": "Slow", "template": "welcome", "audience": {"kind": "list", "list": people}}
    created = api.call("POST", "/campaigns", json={**body, "max_rate": 1, "initial_rate": 1})
    path = f"/campaigns/{created['id']}"
    api.call("POST", f"{path}/start", expect=(200, 202))
    api.until(path, lambda b: b["counters"]["sent"] >= 1)
    assert api.call("POST", f"{path}/pause", expect=(200, 202))["state"] == "paused"
    assert api.call("POST", f"{path}/resume", expect=(200, 202))["state"] == "running"
    assert api.call("POST", f"{path}/cancel", expect=(200, 202))["state"] == "cancelled"
    # Rows a rate-gated batch held when the cancel came are ended by the reaper's next tick.
    counters = api.until(path, lambda b: b["counters"]["pending"] == 0)["counters"]

    assert counters["sent"] < 100 and counters["cancelled"] > 0, counters
    assert counters["sent"] + counters["suppressed"] + counters["cancelled"] == counters["total"], counters


def test_broadcasts_and_batch_messages_are_sent(api: Api) -> None:
    segment = next(s["id"] for s in api.call("GET", "/segments")["results"] if s["name"] == "VIPs")
    broadcasts = [
        api.call("POST", "/broadcasts", json={"template": "welcome", "channels": ["email"], **audience}, expect=202)
        for audience in ({"segment": segment}, {"tag": "imported"}, {"subscribers": ["u1", "u2"]})
    ]
    email = {
        "messages": [
            {"to": "u1", "template": "welcome"},
            {"to": {"email": "x@example.com"}, "subject": "Hi", "text": "Yo"},
        ]
    }
    emails = api.call("POST", "/messages/email/batch", json=email, expect=202)
    push = api.call("POST", "/messages/push/batch", json={"messages": [{"to": "u2", "title": "Hi"}]}, expect=202)

    enqueued = [api.until(f"/broadcasts/{b['id']}", lambda b: b["state"] == "enqueued")["enqueued"] for b in broadcasts]
    assert enqueued == [{"email": 4}, {"email": 2}, {"email": 2}]
    assert len(emails["messages"]) == 2 and len(push["messages"]) == 1


def test_console_edits_tags_and_filters_notifications(tidings: dict[str, Any], api: Api) -> None:
    console = httpx.Client(base_url=tidings["base"] + "/console", timeout=30)
    console.get("/login/")
    token = console.cookies["csrftoken"]
    login = {"login": "demo@tidings.test", "password": "tidings-demo", "csrfmiddlewaretoken": token}
    assert console.post("/login/", data=login).status_code == 302
    u1 = api.call("GET", "/subscribers/u1")
    token = console.cookies["csrftoken"]
    edited = console.post(f"/subscribers/{u1['id']}/", data={"add": "console", "csrfmiddlewaretoken": token})
    assert edited.status_code == 302, edited.text[:2000]
    assert "console" in api.call("GET", "/subscribers/u1")["tags"]

    # JSON containment filters: u1 was sent the published notification by email, u3 never.
    mine = console.get("/notifications/", params={"subscriber": "u1", "channel": "email"})
    theirs = console.get("/notifications/", params={"subscriber": "u3", "channel": "email"})
    assert mine.status_code == theirs.status_code == 200
    assert mine.text.count("data-notification-id=") == 1
    assert theirs.text.count("data-notification-id=") == 0


def test_unknown_urls_answer_a_404_page_and_the_api_problem_json(tidings: dict[str, Any], api: Api) -> None:
    page = httpx.get(tidings["base"] + "/no/such/page/", timeout=30)
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")
    assert "Page not found" in page.text
    assert "Technical details" not in page.text and "URLconf" not in page.text  # not Django's debug page
    response = api.client.get("/no-such-endpoint")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")


def test_favicon_is_served(tidings: dict[str, Any]) -> None:
    icon = httpx.get(tidings["base"] + "/favicon.ico", timeout=30)
    assert icon.status_code == 200
    assert icon.content[:4] == b"\x00\x00\x01\x00"  # an ICO file


def test_delivery_selfcheck_passes_against_the_run(run: Run, tidings: dict[str, Any]) -> None:
    done = run.manage("delivery_selfcheck", "--wait", "30")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["vendor"] == "postgresql"
    assert report["all_sent_once"] is True


def test_the_demo_world_runs_through_the_worker_and_seeding_again_changes_nothing(run: Run, api: Api) -> None:
    done = run.manage("demo", "--json")
    assert done.returncode == 0, done.stderr
    world = json.loads(done.stdout)["world"]
    assert world["subscribers"] >= 300  # the demo's, plus the ones the tests above created
    assert len(world["segments"]) >= 2

    campaign = api.until(f"/campaigns/{world['campaign_id']}", lambda b: b["state"] in ("completed", "cancelled"))
    assert campaign["state"] == "completed", campaign
    assert campaign["counters"]["sent"] > 100, campaign
    # Email, then a 30 s wait, then push: every demo journey reaches the end.
    execution = api.until(
        f"/executions/{world['execution_id']}",
        lambda b: b["totals"]["journeys"] == 40 and not b["totals"].get("active") and not b["totals"].get("waiting"),
    )
    assert execution["totals"].get("completed", 0) >= 30, execution
    # The dry-run push provider refuses a few messages for good: they are the dead letters.
    assert api.call("GET", "/dead-letters")["results"], "the demo should leave a few dead letters"
    again = run.manage("demo", "--json")
    assert json.loads(again.stdout)["world"] == world


def test_ctrl_c_stops_every_process_of_the_run(run: Run, data_dir: Path, tidings: dict[str, Any]) -> None:
    assert _processes_of(data_dir), "the run's processes should be visible while it runs"
    assert run.ctrl_c() == 0, run.text()[-3000:]

    assert _processes_of(data_dir) == [], run.text()[-3000:]
    for name in ("TIDINGS_EMBEDDED_PG_PORT", "TIDINGS_EMBEDDED_REDIS_PORT", "TIDINGS_PORT"):
        assert port_is_free(int(run.env[name])), name
    assert "Stopped the embedded servers." in run.text()


def test_a_second_run_reuses_the_data_and_a_third_is_told_the_folder_is_in_use(
    run: Run, data_dir: Path, tidings: dict[str, Any]
) -> None:
    assert run.process.poll() is not None  # the first run has stopped
    second = Run(data_dir, _env(data_dir), "second")
    try:
        keys = second.wait_running()
        assert "Creating the PostgreSQL" not in second.text()
        assert keys["Secret key"] == tidings["secret_key"]
        client = httpx.Client(
            base_url=second.base + "/api/v1", headers={"Authorization": f"Bearer {keys['Secret key']}"}
        )
        assert client.get("/subscribers/u1").json()["email"] == "anon@example.com"

        third = subprocess.run(
            [sys.executable, "manage.py", "run_all"],
            cwd=BASE_DIR,
            env={**second.env, "TIDINGS_PORT": str(free_port())},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert third.returncode == 1
        assert _one_line(third.stderr) == (
            f"CommandError: {data_dir} is in use by another run (pid {second.process.pid}): "
            "stop it, or set TIDINGS_DATA_DIR to another folder."
        )
    finally:
        assert second.ctrl_c() == 0, second.text()[-3000:]
    assert _processes_of(data_dir) == []


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


def _fails_at_once(data_dir: Path, **extra: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", "run_all"],
        cwd=BASE_DIR,
        env=_env(data_dir, **extra),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert _processes_of(data_dir) == []
    return _one_line(done.stderr)


def test_data_from_another_postgres_major_version_is_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "postgres").mkdir()
    (tmp_path / "postgres" / "PG_VERSION").write_text("16\n")
    line = _fails_at_once(tmp_path)
    assert line.startswith(f"CommandError: {tmp_path / 'postgres'} holds PostgreSQL 16 data"), line
    assert "move the folder aside" in line


def test_data_locked_by_a_running_postgres_is_one_clear_line(tmp_path: Path) -> None:
    pgdata = tmp_path / "postgres"
    pgdata.mkdir()
    (pgdata / "PG_VERSION").write_text("18\n")
    # Only a process that runs postgres counts as the owner of postmaster.pid.
    holder = subprocess.Popen(["bash", "-c", "exec -a postgres sleep 60"])
    try:
        (pgdata / "postmaster.pid").write_text(f"{holder.pid}\n{pgdata}\n")
        line = _fails_at_once(tmp_path)
    finally:
        holder.kill()
        holder.wait()
    assert line == (
        f"CommandError: {pgdata} is locked by a PostgreSQL still running as pid {holder.pid}: "
        f"stop it (kill {holder.pid}), then retry."
    )


@pytest.mark.parametrize(
    ("variable", "message"),
    [
        ("TIDINGS_EMBEDDED_PG_PORT", "Port {port} is taken (another PostgreSQL or Tidings run?): stop it, or choose"),
        ("TIDINGS_EMBEDDED_REDIS_PORT", "Port {port} is taken (another Redis or Tidings run?): stop it, or choose"),
        ("TIDINGS_PORT", "Port {port} is in use (another Tidings run?): stop it, or run TIDINGS_PORT=8001 make run."),
    ],
)
def test_a_port_in_use_is_one_clear_line(tmp_path: Path, variable: str, message: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = _fails_at_once(tmp_path, **{variable: str(port)})
    assert line.startswith("CommandError: " + message.format(port=port)), line
