"""Kombu's filesystem transport (the broker of ``make run``) with messages written atomically.

The stock transport creates the message file under its final name and only then writes
into it; a worker listing the folder at that moment moves the still-empty file away, fails
to decode it and stops. Here each message is written under a name no queue reads and then
renamed into place, which is atomic within one folder: a reader sees all of it or nothing.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:
        # The same name the stock transport gives (readers sort on its time prefix).
        folder = Path(self.data_folder_out)
        final = folder / f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        # A leading dot and no ".msg" ending: no queue's reader ever picks this name up.
        partial = folder / f".{uuid.uuid4().hex}.partial"
        try:
            partial.write_bytes(str_to_bytes(dumps(payload)))
            partial.replace(final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
