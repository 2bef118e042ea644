"""Database-enforced rules: published template versions never change; events are append-only."""

from django.db import migrations

SQL = """
CREATE OR REPLACE FUNCTION delivery_refuse_published_version_update() RETURNS trigger AS $$
BEGIN
    IF OLD.published_at IS NOT NULL THEN
        RAISE EXCEPTION 'template version % is published and cannot change', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER delivery_templateversion_immutable
    BEFORE UPDATE ON delivery_templateversion
    FOR EACH ROW EXECUTE FUNCTION delivery_refuse_published_version_update();

CREATE OR REPLACE FUNCTION delivery_refuse_event_update() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'delivery events are append-only' USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER delivery_deliveryevent_append_only
    BEFORE UPDATE ON delivery_deliveryevent
    FOR EACH ROW EXECUTE FUNCTION delivery_refuse_event_update();
"""

REVERSE = """
DROP TRIGGER IF EXISTS delivery_templateversion_immutable ON delivery_templateversion;
DROP FUNCTION IF EXISTS delivery_refuse_published_version_update();
DROP TRIGGER IF EXISTS delivery_deliveryevent_append_only ON delivery_deliveryevent;
DROP FUNCTION IF EXISTS delivery_refuse_event_update();
"""


def forwards(apps, schema_editor):
    schema_editor.execute(SQL, None)


def backwards(apps, schema_editor):
    schema_editor.execute(REVERSE, None)


class Migration(migrations.Migration):
    dependencies = [("delivery", "0001_initial")]

    operations = [migrations.RunPython(forwards, backwards)]
