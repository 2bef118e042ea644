"""Benchmark: builder edits through the real view stack, and the lanes layout on its own.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tidings_bench_builder \\
        python manage.py bench_builder --nodes 100 --edits 300

Seeds a project with a member and a journey of ``--nodes`` nodes (nested conditions,
joins, waits and sends), signs the member in with Django's test client and posts edits
the way the builder page does: insert on an edge, configure, rename, delete, undo, redo.
Each request goes through the middleware, sign-in, the edit service with its row
lock, the undo history, validation, the layout and the rendered canvas fragment. Prints
p50/p95/max per edit (wall clock, and this process's CPU, which a loaded machine inflates
less), then times the layout alone on ``--layout-nodes`` nodes.
"""

from __future__ import annotations

import random
import re
import statistics
import time
import uuid
from typing import Any

from django.core.management.base import CommandError, CommandParser

from apps.core.bench import BenchCommand

REVISION = re.compile(rb'id="builder-workspace"[^>]*data-revision="(\d+)"')


def sample_graph(size: int, seed: int = 7) -> dict[str, Any]:
    """A journey of about ``size`` nodes: runs of steps, conditions with lanes and joins."""
    rng = random.Random(seed)
    nodes: list[dict[str, Any]] = [{"id": "start", "type": "start", "config": {}}]
    edges: list[dict[str, Any]] = []

    def add(type_: str, config: dict[str, Any]) -> str:
        node_id = f"{type_.replace('_', '-')}-{len(nodes)}"
        nodes.append({"id": node_id, "type": type_, "config": config})
        return node_id

    def link(source: tuple[str, str], target: str) -> None:
        edges.append({"from": source[0], "handle": source[1], "to": target})

    def run(source: tuple[str, str], depth: int) -> tuple[str, str]:
        while len(nodes) < size - 2:
            roll = rng.random()
            if roll < 0.18 and depth < 4:
                check = add("condition", {"predicates": [{"op": "has_tag", "tag": f"t{len(nodes)}"}]})
                link(source, check)
                yes, no = run((check, "yes"), depth + 1), run((check, "no"), depth + 1)
                join = add("join", {})
                link(yes, join)
                link(no, join)
                source = (join, "next")
            elif roll < 0.3 and depth > 0:
                return source
            else:
                kind = rng.choice(["email", "push", "wait", "add_tag"])
                config = {
                    "email": {"template": "welcome"},
                    "push": {"template": "welcome-push"},
                    "wait": {"mode": "duration", "hours": 2},
                    "add_tag": {"tags": ["seen"]},
                }[kind]
                step = add(kind, config)
                link(source, step)
                source = (step, "next")
        return source

    link(run(("start", "next"), 0), add("end", {}))
    return {"nodes": nodes, "edges": edges}


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


class Command(BenchCommand):
    help = "Time builder edits (one request each) on a journey and the lanes layout alone."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--nodes", type=int, default=100, help="size of the journey edited")
        parser.add_argument("--edits", type=int, default=300)
        parser.add_argument("--layout-nodes", type=int, default=500)
        parser.add_argument("--layout-runs", type=int, default=30)
        parser.add_argument("--keep", action="store_true", help="leave the seeded project in the database")

    def handle(self, *args: Any, **options: Any) -> None:
        from django.test import Client

        from apps.governance.models import Membership
        from apps.projects.services import organization_create, project_create
        from apps.workflows.builder.layout import layout
        from apps.workflows.services import workflow_save_draft

        tag = uuid.uuid4().hex[:8]
        organization = organization_create(name=f"Bench builder {tag}")
        project = project_create(organization=organization, name="Bench", timezone="Europe/Lisbon")
        from django.contrib.auth import get_user_model

        user = get_user_model().objects.create_user(username=f"bench-builder-{tag}", password=uuid.uuid4().hex)
        # The console opens only to a verified address (apps.accounts.gate).
        from allauth.account.models import EmailAddress

        EmailAddress.objects.create(user=user, email=f"{user.username}@bench.test", verified=True, primary=True)
        Membership.objects.create(user=user, organization=organization, role="editor")
        graph = sample_graph(options["nodes"])
        workflow, _ = workflow_save_draft(project=project, key="bench", name="Bench", graph=graph)
        client = Client()
        client.force_login(user)
        try:
            timings, cpu = self._edits(client, workflow.key, graph, options["edits"])
            sizes = self._layouts(layout, options["layout_nodes"], options["layout_runs"])
        finally:
            if not options["keep"]:
                organization.delete()
                user.delete()
        self.stdout.write(
            f"edits on a {len(graph['nodes'])}-node journey ({len(timings)} requests, full view stack): "
            f"p50 {_percentile(timings, 0.5):.1f} ms, p95 {_percentile(timings, 0.95):.1f} ms, "
            f"max {max(timings):.1f} ms; CPU of this process per edit p50 {_percentile(cpu, 0.5):.1f} ms, "
            f"p95 {_percentile(cpu, 0.95):.1f} ms (the database's own time not included)"
        )
        for nodes, runs in sizes:
            self.stdout.write(
                f"layout of {nodes} nodes ({len(runs)} runs): median {statistics.median(runs):.1f} ms, "
                f"p95 {_percentile(runs, 0.95):.1f} ms"
            )

    def _edits(self, client: Any, key: str, graph: dict[str, Any], count: int) -> tuple[list[float], list[float]]:
        url = f"/console/workflows/{key}/builder/edit"
        rng = random.Random(11)
        revision = 0
        waits = [n["id"] for n in graph["nodes"] if n["type"] == "wait"]
        inserted: list[str] = []
        timings: list[float] = []
        cpu: list[float] = []
        edges = list(graph["edges"])
        for i in range(count):
            step = i % 6
            if step == 0:
                e = rng.choice(edges)
                data = {
                    "op": "add",
                    "type": "email",
                    "edge_from": e["from"],
                    "edge_handle": e["handle"],
                    "edge_to": e["to"],
                }
            elif step == 1:
                data = {
                    "op": "configure",
                    "node": rng.choice(waits),
                    "cfg.mode": "duration",
                    "cfg.hours": str(1 + i % 9),
                }
            elif step == 2:
                data = {"op": "rename", "node": rng.choice(waits), "label": f"Pause {i}"}
            elif step == 3:
                data = {"op": "undo"}
            elif step == 4:
                data = {"op": "redo"}
            else:
                data = {"op": "delete", "nodes": inserted.pop() if inserted else rng.choice(waits)}
            started, started_cpu = time.perf_counter(), time.process_time()
            response = client.post(url, {**data, "revision": revision})
            timings.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - started_cpu) * 1000)
            if response.status_code != 200:
                raise CommandError(f"edit {data} answered {response.status_code}: {response.content[:300]!r}")
            revision = int(REVISION.search(response.content).group(1))
            if step == 0:
                inserted.append(re.search(rb'data-focus="([^"]+)"', response.content).group(1).decode())
        return timings, cpu

    def _layouts(self, layout: Any, largest: int, runs: int) -> list[tuple[int, list[float]]]:
        results = []
        for size in sorted({100, largest}):
            graph = sample_graph(size, seed=3)
            layout(graph)  # warm the node type lookups
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                layout(graph)
                times.append((time.perf_counter() - started) * 1000)
            results.append((len(graph["nodes"]), times))
        return results
