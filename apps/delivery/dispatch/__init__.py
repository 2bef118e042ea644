"""The dispatcher: how a Delivery row becomes a provider call, exactly once in effect.

Queue of record
    Postgres rows. A Celery message on queue "high", "normal" or "bulk" is only a wake-up
    ("there is work in this lane"), sent on commit and de-duplicated with a Redis flag. A
    beat sweeper re-wakes any lane with due work, so a lost wake-up only costs latency.

Claim
    A dispatcher claims up to ``TIDINGS_DISPATCH_BATCH_SIZE`` due rows of one lane (bulk:
    ``TIDINGS_DISPATCH_BULK_BATCH_SIZE``, larger) in one statement: ``UPDATE ... FROM
    (SELECT id ... FOR UPDATE SKIP LOCKED) RETURNING``, setting
    state=claimed, ``claimed_until`` (now + claim TTL) and a random ``claim_token``. High
    and normal lanes claim in due order; the bulk lane walks a keyset cursor on id, so
    claim cost stays flat however many sent rows pile up. Partial indexes hold waiting
    rows only.

Lanes
    A wake-up for lane L runs a loop over L and every lane above it, weighted 3:2:1
    (high:normal:bulk); a lane with nothing due passes its turn. A high worker therefore
    never touches bulk, and a busy bulk worker still serves high first every cycle.

One batch
    group by (project, channel, connector) → suppression + opt-outs (own end states) →
    rate gate (one Redis call reserves tokens for the group; the rest is deferred, never
    failed) → render → Attempt rows written (COPY) and committed BEFORE the provider is
    called → ``adapter.send_batch`` → ONE transaction records every result (bulk UPDATE
    FROM unnest, events by COPY, dead letters with a payload snapshot, connector health,
    origin listeners). Results are applied only where ``claim_token`` still matches.

Crashes
    A worker killed mid-send leaves rows ``claimed`` with an Attempt that has no outcome.
    Once ``claimed_until`` passes, the sweeper marks that attempt ``lost`` and puts the row
    back as ``retrying``; the next send carries the same ``delivery_key`` as the provider
    idempotency key, so a message that did reach the provider is answered "already
    accepted" instead of going out twice (the dry-run adapter simulates exactly this).
    Each claim taken back this way counts on the row (``crashes``). A row one crash short
    of ``TIDINGS_POISON_AFTER_CRASHES`` is claimed alone, after its worker's batch is
    recorded, so that if it is what kills workers only it is charged; at the limit it is
    dead-lettered as "poison" instead of running again. A row whose attempt budget is
    spent is dead-lettered instead of being claimed once more.

Poison
    Anything that breaks while one message is rendered, decorated or classified fails
    that message only, with the exception as its reason; a group or a record that fails
    as a whole is done again one message at a time (``guard``).

Self-check
    ``manage.py delivery_selfcheck`` sends a few dry-run emails end to end and prints
    their states.
"""

from apps.delivery.dispatch.runner import dispatch_batch, dispatch_lane_run, sweep

__all__ = ["dispatch_batch", "dispatch_lane_run", "sweep"]
