"""Benchmark: one campaign to N generated recipients through real Celery workers, Postgres,
Redis and the dry-run email adapter (render, Anymail message + payload, no network).

Prints fan-out time, send time, messages/s and peak memory, then checks that every
recipient has exactly one delivery, none was accepted twice, and counters equal rows.
Run it against a database of its own, e.g.
DATABASE_URL=postgres://postgres@127.0.0.1:5432/tidings_bench_camp python manage.py bench_campaign
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

from apps.core.bench import BenchCommand

BASE_DIR = Path(settings.BASE_DIR)


class Command(BenchCommand):
    help = "Send one campaign to N generated recipients and print the figures."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--recipients", type=int, default=100_000)
        # Four children on two cores: each spends a good part of a batch waiting for
        # Postgres (claim, attempts, record), and the extra processes keep both cores busy
        # meanwhile. Measured at 1M recipients: 2 → 126 s, 3 → 100 s, 4 → 98 s.
        parser.add_argument("--workers", type=int, default=4, help="prefork children on the bulk lane")
        parser.add_argument("--timeout", type=int, default=1800)

    def handle(self, *args: Any, **options: Any) -> None:
        n = options["recipients"]
        self._cancel_leftovers()
        project, campaign_kwargs = self._setup(n)
        workers = self._start_workers(options["workers"])
        try:
            self._run(project, campaign_kwargs, n, workers, options["timeout"])
        finally:
            for process in workers:
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGTERM)
            for process in workers:
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)

    def _cancel_leftovers(self) -> None:
        """An interrupted earlier run would keep its rows in the bulk lane ahead of ours."""
        from apps.campaigns.lifecycle import campaign_cancel
        from apps.campaigns.models import Campaign, CampaignState

        for campaign in Campaign.objects.filter(state__in=[CampaignState.RUNNING, CampaignState.PAUSED]):
            campaign_cancel(campaign=campaign, reason="left over from an interrupted benchmark")
            self.stdout.write(f"cancelled left-over campaign {campaign.pk}")

    def _setup(self, n: int) -> tuple[Any, dict[str, Any]]:
        from apps.campaigns.models import CampaignSettings
        from apps.delivery.channels.dryrun import dryrun_reset
        from apps.delivery.models import Connector, Template, TemplateVersion
        from apps.projects.models import Organization, Project

        stamp = timezone.now().strftime("%Y%m%d%H%M%S")
        org = Organization.objects.create(name=f"Bench {stamp}", slug=f"bench-{stamp}")
        project = Project.objects.create(organization=org, name=f"Bench {stamp}", slug=f"bench-{stamp}")
        template = Template.objects.create(project=project, key="bench", channel="email", name="Bench")
        TemplateVersion.objects.create(
            project=project,
            template=template,
            number=1,
            content={
                "email": {
                    "subject": "{{ subscriber.first_name }}, our autumn sale starts today",
                    "text": "Hi {{ subscriber.first_name }},\n\nEverything is 20% off until Sunday.\n",
                    "html": "<p>Hi {{ subscriber.first_name }},</p><p>Everything is <b>20% off</b> until Sunday.</p>",
                }
            },
            published_at=timezone.now(),
        )
        connector = Connector(
            project=project,
            channel="email",
            provider="dryrun",
            is_default=True,
            settings={"record_sends": True, "delivered_rate": 0.0, "dedupe_ttl_s": 7200},
        )
        connector.set_credentials({"api_key": "bench-dry-run"})
        connector.save()
        dryrun_reset(project.pk)
        # The provider account is not the limit here: the pipeline is what is measured.
        CampaignSettings.objects.create(project=project, initial_rate=50_000, max_rate=100_000, min_rate=1_000)
        started = time.monotonic()
        with connection.cursor() as cursor:
            cursor.execute(
                """
                INSERT INTO subscribers_subscriber (project_id, external_id, email, phone, timezone, locale,
                    attributes, created_at, updated_at)
                SELECT %s, 'u' || g, 'user' || g || '@example.com', '', '', '',
                    jsonb_build_object('first_name', 'Ann' || g), now(), now()
                FROM generate_series(1, %s) g
                """,
                [project.pk, n],
            )
            cursor.execute("ANALYZE subscribers_subscriber")
        self.stdout.write(f"recipients created: {n} in {time.monotonic() - started:.1f} s (generate_series)")
        return project, {"project": project, "name": f"Bench {n}", "template": template, "connector": connector}

    def _start_workers(self, processes: int) -> list[subprocess.Popen]:
        """Two worker processes, as a deployment runs them: ``processes`` children on the
        bulk lane, and one child for fan-out chunks and the other queues, so a chunk never
        waits behind a dispatcher run that keeps a bulk child busy for many seconds."""
        db = connection.settings_dict
        url = f"postgres://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        env = {**os.environ, "DATABASE_URL": url, "PYTHONUNBUFFERED": "1", "LOG_LEVEL": "WARNING"}
        log_dir = Path(tempfile.gettempdir())
        started = []
        # The second worker runs its tasks in its own process (solo pool): one process, not two.
        for role, queues, pool in (
            ("bulk", "bulk", ["-P", "prefork", "-c", str(processes)]),
            ("other", "campaigns,default,normal,high", ["-P", "solo"]),
        ):
            command = [
                sys.executable, "-m", "celery", "-A", "config", "worker", "-l", "warning", *pool,
                "-Q", queues, "-n", f"bench{role}{os.getpid()}@%h",
                "--without-gossip", "--without-mingle", "--without-heartbeat",
            ]  # fmt: skip
            log = (log_dir / f"tidings-bench-worker-{role}-{os.getpid()}.log").open("w")
            process = subprocess.Popen(command, cwd=BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
                                       start_new_session=True)  # fmt: skip
            started.append(process)
            self.stdout.write(f"worker {role}: queues {queues}, {' '.join(pool)}, log {log.name}")
        time.sleep(4)
        for process in started:
            if process.poll() is not None:
                raise RuntimeError("a worker exited early; see its log")
        return started

    def _run(self, project: Any, kwargs: dict[str, Any], n: int, workers: list[Any], timeout: int) -> None:
        from apps.campaigns.control import control_tick
        from apps.campaigns.lifecycle import campaign_start
        from apps.campaigns.models import Campaign, CampaignChunk, CampaignStats
        from apps.campaigns.reconcile import campaign_reconcile, campaigns_reap
        from apps.campaigns.services import campaign_create
        from apps.delivery.dispatch.runner import sweep

        campaign = campaign_start(campaign=campaign_create(**kwargs))
        t0 = time.monotonic()
        fanout_s = send_s = None
        last_tick = 0.0
        peak_rss = 0
        cpu = CpuMeter(workers)
        while time.monotonic() - t0 < timeout:
            time.sleep(0.5)
            peak_rss = max(peak_rss, _rss_kib(workers))
            cpu.sample()
            now = time.monotonic()
            if fanout_s is None and not CampaignChunk.objects.filter(campaign=campaign, done=False).exists():
                fanout_s = now - t0
                self.stdout.write(f"fan-out done: {fanout_s:.1f} s")
            if now - last_tick >= 2:
                # What beat does in production: control loop, reaper, sweeper.
                control_tick()
                campaigns_reap()
                sweep()
                last_tick = now
                stats = CampaignStats.objects.get(campaign=campaign)
                self.stdout.write(f"  t={now - t0:6.1f}s sent={stats.sent} rate={stats.current_rate:.0f}/s")
            if fanout_s is not None:
                stats = CampaignStats.objects.get(campaign=campaign)
                if stats.pending <= 0 and stats.sent + stats.dead + stats.suppressed >= n:
                    send_s = time.monotonic() - t0
                    break
        cpu.sample()
        campaign_reconcile(campaign)
        campaign = Campaign.objects.get(pk=campaign.pk)
        if send_s is None:
            self.stdout.write(self.style.ERROR(f"timed out after {timeout} s"))
            send_s = time.monotonic() - t0
        self._report(project, campaign, n, fanout_s or 0.0, send_s, peak_rss)
        self.stdout.write(cpu.summary(n))

    def _report(self, project: Any, campaign: Any, n: int, fanout_s: float, send_s: float, peak_rss: int) -> None:
        from apps.campaigns.ledger import ledger_counts
        from apps.campaigns.models import CampaignStats
        from apps.delivery.channels.dryrun import dryrun_sent_counts

        stats = CampaignStats.objects.get(campaign=campaign)
        self.stdout.write(f"fan-out time:   {fanout_s:.1f} s")
        self.stdout.write(f"send time:      {send_s:.1f} s (start to last recipient recorded)")
        self.stdout.write(f"messages/s:     {stats.sent / send_s:,.0f}")
        self.stdout.write(f"peak memory:    {peak_rss / 1024:.0f} MiB (sum of worker processes' RSS)")
        self.stdout.write(f"campaign state: {campaign.state}")
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*), count(DISTINCT subscriber_id) FROM delivery_delivery"
                " WHERE project_id = %s AND origin_kind = 'campaign' AND origin_id = %s",
                [project.pk, str(campaign.pk)],
            )
            rows, distinct = cursor.fetchone()
            cursor.execute(
                "SELECT count(*) FROM (SELECT a.delivery_id FROM delivery_attempt a WHERE a.project_id = %s"
                " AND a.outcome = 'accepted' GROUP BY a.delivery_id HAVING count(*) > 1) x",
                [project.pk],
            )
            (twice_attempts,) = cursor.fetchone()
        sent = dryrun_sent_counts(project.pk)
        twice_provider = sum(1 for v in sent.values() if v > 1)
        counts = ledger_counts(project_id=project.pk, campaign_id=campaign.pk).as_dict()
        mismatched = {k: (getattr(stats, k), counts[k]) for k in ("sent", "dead", "suppressed", "pending")
                      if getattr(stats, k) != counts[k]}  # fmt: skip
        checks = [
            ("exactly one delivery per recipient", rows == n and distinct == n, f"{rows} rows, {distinct} recipients"),
            ("none accepted twice (attempts)", twice_attempts == 0, f"{twice_attempts}"),
            ("none sent twice (provider)", twice_provider == 0 and len(sent) == counts["sent"],
             f"{twice_provider} twice, {len(sent)} distinct sent"),
            ("counters == rows", not mismatched, str(mismatched or counts)),
        ]  # fmt: skip
        for name, ok, detail in checks:
            style = self.style.SUCCESS if ok else self.style.ERROR
            self.stdout.write(style(f"{'OK ' if ok else 'FAIL'} {name}: {detail}"))


def _rss_kib(processes: list[Any]) -> int:
    """Current RSS of the worker processes and their children (Linux /proc)."""
    total = 0
    pids = {p.pid for p in processes}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        pid, ppid = int(entry.name), int(fields.get("PPid", "0").strip() or 0)
        if pid in pids or ppid in pids:
            total += int(fields.get("VmRSS", "0 kB").split()[0])
    return total


class CpuMeter:
    """CPU seconds the campaign cost, independent of what else the machine is doing:
    the worker processes (exact), and the Postgres backends serving this database
    (sampled every half second, so a backend's last moments before it closes are missed)."""

    def __init__(self, workers: list[Any]) -> None:
        self.workers = workers
        self.start = self._read()
        self.latest: dict[tuple[str, int], float] = dict(self.start)

    def _backends(self) -> list[int]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            return [row[0] for row in cursor.fetchall()]

    def _read(self) -> dict[tuple[str, int], float]:
        pids = {p.pid for p in self.workers}
        found: dict[tuple[str, int], float] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and (int(entry.name) in pids or _ppid(entry) in pids):
                found[("workers", int(entry.name))] = _cpu_seconds(int(entry.name))
        for pid in self._backends():
            found[("postgres", pid)] = _cpu_seconds(pid)
        return found

    def sample(self) -> None:
        for key, seconds in self._read().items():
            self.latest[key] = max(seconds, self.latest.get(key, 0.0))

    def summary(self, n: int) -> str:
        spent = {"workers": 0.0, "postgres": 0.0}
        for (kind, pid), seconds in self.latest.items():
            spent[kind] += seconds - self.start.get((kind, pid), 0.0)
        per = {kind: seconds / max(n, 1) * 1e6 for kind, seconds in spent.items()}
        return (
            f"CPU per message: workers {per['workers']:.0f} µs, Postgres backends ≈{per['postgres']:.0f} µs"
            f" ({spent['workers']:.1f} s + {spent['postgres']:.1f} s in all)"
        )


def _ppid(entry: Path) -> int:
    try:
        return int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _cpu_seconds(pid: int) -> float:
    """utime + stime of one process (Linux /proc), in seconds; 0 once it has gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
