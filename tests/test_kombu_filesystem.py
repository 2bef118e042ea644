"""The filesystem broker of ``make run``: a worker never reads a half-written message.

Two processes publish while this one consumes as fast as it can, as beat and the web
process do while a worker drains its queues. With Kombu's stock transport the consumer
soon moves away a file that is still empty and fails to decode it (the worker then
stops, and ``run_all`` with it).
"""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path
from queue import Empty
from typing import Any

from kombu import Connection

TRANSPORT = "config.kombu_filesystem:Transport"
PER_WRITER = 400
WRITERS = 2


def _options(folder: Path) -> dict[str, Any]:
    return {
        "data_folder_in": str(folder),
        "data_folder_out": str(folder),
        "store_processed": False,
        "control_folder": str(folder / "control"),
    }


def _publish(folder: Path, writer: int) -> None:
    with Connection("filesystem://", transport=TRANSPORT, transport_options=_options(folder)) as conn:
        channel = conn.default_channel
        for number in range(PER_WRITER):
            # Large enough that writing it takes a while.
            channel._put("jobs", {"writer": writer, "number": number, "body": "x" * 50_000})


def test_a_consumer_racing_two_publishers_decodes_every_message(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_publish, args=(tmp_path, w)) for w in range(WRITERS)]
    for process in writers:
        process.start()
    seen: set[tuple[int, int]] = set()
    deadline = time.monotonic() + 60
    try:
        with Connection("filesystem://", transport=TRANSPORT, transport_options=_options(tmp_path)) as conn:
            channel = conn.default_channel
            while len(seen) < WRITERS * PER_WRITER and time.monotonic() < deadline:
                try:
                    message = channel._get("jobs")
                except Empty:
                    continue
                seen.add((message["writer"], message["number"]))
    finally:
        for process in writers:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()

    assert len(seen) == WRITERS * PER_WRITER
    assert not list(tmp_path.glob(".*.partial"))
