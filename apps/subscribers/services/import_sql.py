"""The set-based statements of the subscriber import, over its two temp tables.

tidings_import_rows holds one validated chunk (COPY); tidings_import_ids maps each of its
external ids to the subscriber id and whether this chunk created it.
"""

# Assembled only from the constant fragments below; values travel as parameters.
# ruff: noqa: S608
from __future__ import annotations

UPDATE_EXISTING = """
WITH up AS (
    UPDATE subscribers_subscriber s SET
        email = coalesce(r.email, s.email),
        phone = coalesce(r.phone, s.phone),
        timezone = coalesce(r.timezone, s.timezone),
        locale = coalesce(r.locale, s.locale),
        attributes = s.attributes || coalesce(r.attributes, '{}'::jsonb),
        updated_at = now()
    FROM tidings_import_rows r
    WHERE s.project_id = %s AND s.external_id = r.external_id
    RETURNING r.external_id, s.id
)
INSERT INTO tidings_import_ids (external_id, id, inserted) SELECT external_id, id, false FROM up
"""

_NEW_COLUMNS = """
    INSERT INTO subscribers_subscriber
        (project_id, external_id, email, phone, timezone, locale, attributes, created_at, updated_at)
    SELECT %s, r.external_id, coalesce(r.email, ''), coalesce(r.phone, ''), coalesce(r.timezone, ''),
           coalesce(r.locale, ''), coalesce(r.attributes, '{}'::jsonb), now(), now()
    FROM tidings_import_rows r
    WHERE NOT EXISTS (SELECT 1 FROM tidings_import_ids i WHERE i.external_id = r.external_id)
"""

# Fast path: a plain INSERT of the rows the UPDATE did not find.
INSERT_NEW = f"""
WITH up AS ({_NEW_COLUMNS} RETURNING external_id, id)
INSERT INTO tidings_import_ids (external_id, id, inserted) SELECT external_id, id, true FROM up
"""

# Slow path, after a concurrent identify created one of them meanwhile.
UPSERT_NEW = f"""
WITH up AS ({_NEW_COLUMNS}
    ON CONFLICT (project_id, external_id) WHERE external_id IS NOT NULL DO UPDATE SET
        email = coalesce(nullif(EXCLUDED.email, ''), subscribers_subscriber.email),
        phone = coalesce(nullif(EXCLUDED.phone, ''), subscribers_subscriber.phone),
        timezone = coalesce(nullif(EXCLUDED.timezone, ''), subscribers_subscriber.timezone),
        locale = coalesce(nullif(EXCLUDED.locale, ''), subscribers_subscriber.locale),
        attributes = subscribers_subscriber.attributes || EXCLUDED.attributes,
        updated_at = now()
    RETURNING external_id, id, (xmax = 0) AS inserted)
INSERT INTO tidings_import_ids (external_id, id, inserted) SELECT external_id, id, inserted FROM up
"""

TAGS = """
INSERT INTO subscribers_tag (project_id, name, created_at)
SELECT %s, n, now() FROM (
    SELECT DISTINCT unnest(string_to_array(tags, %s)) AS n FROM tidings_import_rows WHERE tags IS NOT NULL
) names ORDER BY n
ON CONFLICT (project_id, name) DO NOTHING
"""

# Subscribers created by this chunk cannot have links yet (nobody else can see them
# before commit), so their links skip ON CONFLICT, which costs about a third more.
LINKS = """
WITH ins AS (
    INSERT INTO subscribers_subscribertag (project_id, subscriber_id, tag_id, created_at)
    SELECT %s, i.id, t.id, now()
    FROM tidings_import_rows r
    JOIN tidings_import_ids i ON i.external_id = r.external_id
    CROSS JOIN LATERAL unnest(string_to_array(r.tags, %s)) AS n(name)
    JOIN subscribers_tag t ON t.project_id = %s AND t.name = n.name
    WHERE r.tags IS NOT NULL AND i.inserted = {inserted}
    {conflict}
    RETURNING subscriber_id, tag_id
)
INSERT INTO subscribers_tagevent (project_id, subscriber_id, tag_name, action, source, source_ref, created_at)
SELECT %s, ins.subscriber_id, t.name, 'added', 'import', %s, now()
FROM ins JOIN subscribers_tag t ON t.id = ins.tag_id
"""
