"""Every API write path on ``make run``'s embedded defaults: SQLite, no Redis, filesystem broker.

pytest-django runs against Postgres, so this test starts ``manage.py run_all`` itself (web,
worker and beat, exactly what ``make run`` starts) with DATABASE_URL, REDIS_URL and
CELERY_BROKER_URL unset on a fresh TIDINGS_DATA_DIR, and speaks HTTP to it with the demo
keys: identify with an anonymous merge, tags, a device, a segment and its count, a CSV
import, a published notification, a small journey and a small campaign, each followed
until the real worker has finished it. DEBUG is on, as under ``make run``, so the problem
documents are checked where Django would otherwise answer with its debug page.
"""

from __future__ import annotations

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

BASE_DIR = Path(__file__).resolve().parents[1]
UNSET = ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "CACHE_KEY_PREFIX", "TIDINGS_TEST_DB_NAME")
WAIT = 30.0
logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per poll drowns a failure's report


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.test_sqlite", TIDINGS_DATA_DIR=str(data_dir), DJANGO_DEBUG="1")
    return env


def _manage(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=_env(data_dir),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def tidings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """``make run`` on a fresh data dir: tables, then run_all (demo keys, web, worker, beat)."""
    data_dir = tmp_path_factory.mktemp("make-run")
    _manage(data_dir, "migrate", "--run-syncdb", "--noinput", "-v0")
    port = _free_port()
    log_path = data_dir / "run_all.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [sys.executable, "manage.py", "run_all", "--port", str(port)],
            cwd=BASE_DIR,
            env={**_env(data_dir), "PYTHONUNBUFFERED": "1"},  # the keys must reach the log at once
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 90
            while True:
                assert server.poll() is None, log_path.read_text()
                try:
                    if httpx.get(f"{base}/health", timeout=2).status_code < 500:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, log_path.read_text()
                time.sleep(0.2)
            # The keys as run_all prints them for the person who typed `make run`.
            printed = dict(re.findall(r"^\s*(Public key|Secret key):\s*(\S+)", log_path.read_text(), re.MULTILINE))
            yield {
                "base": base,
                "log": log_path,
                "public_key": printed["Public key"],
                "secret_key": printed["Secret key"],
            }
        finally:
            server.send_signal(signal.SIGINT)  # run_all stops web, worker and beat itself
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()


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
    assert none_of["count"] == 0
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
    # One message a second: the campaign is still sending while it is paused and cancelled.
    body = {"name": "Slow", "template": "welcome", "audience": {"kind": "list", "list": ["u1", "u2", "u3", "imp-1"]}}
    created = api.call("POST", "/campaigns", json={**body, "max_rate": 1, "initial_rate": 1})
    path = f"/campaigns/{created['id']}"
    api.call("POST", f"{path}/start", expect=(200, 202))
    api.until(path, lambda b: b["counters"]["pending"] + b["counters"]["sent"] == 4)
    assert api.call("POST", f"{path}/pause", expect=(200, 202))["state"] == "paused"
    assert api.call("POST", f"{path}/resume", expect=(200, 202))["state"] == "running"
    assert api.call("POST", f"{path}/cancel", expect=(200, 202))["state"] == "cancelled"
    done = api.until(path, lambda b: b["counters"]["pending"] == 0)

    counters = done["counters"]
    assert counters["cancelled"] > 0, counters
    assert counters["sent"] + counters["cancelled"] == 4, counters


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
    login = {"username": "demo", "password": "tidings-demo", "csrfmiddlewaretoken": token}
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


def test_unknown_errors_under_debug_answer_problem_json(api: Api) -> None:
    response = api.client.get("/no-such-endpoint")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")
