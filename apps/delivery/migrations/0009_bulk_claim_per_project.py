"""The bulk lane's claim index leads with the project, for each project's fair share."""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # Concurrent index builds: a busy delivery table keeps taking writes meanwhile.
    atomic = False

    dependencies = [
        ("delivery", "0008_sent_content"),
    ]

    operations = [
        RemoveIndexConcurrently(model_name="delivery", name="delivery_bulk_claimable"),
        AddIndexConcurrently(
            model_name="delivery",
            index=models.Index(
                condition=models.Q(("lane", "bulk"), ("state__in", ["queued", "retrying"])),
                fields=["project", "id"],
                name="delivery_bulk_claimable",
            ),
        ),
    ]
