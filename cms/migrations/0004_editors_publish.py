"""The Editors group publishes the pages it writes (Wagtail's default is add and change only)."""

from django.db import migrations


def editors_publish(apps, schema_editor):
    ContentType = apps.get_model("contenttypes.ContentType")
    Permission = apps.get_model("auth.Permission")
    Group = apps.get_model("auth.Group")
    GroupPagePermission = apps.get_model("wagtailcore.GroupPagePermission")
    Page = apps.get_model("wagtailcore.Page")

    home = Page.objects.filter(depth=2, content_type__app_label="cms", content_type__model="homepage").first()
    if home is None:
        return
    # Permission rows are normally made after migrating; Wagtail's own migrations make theirs the same way.
    page_type, _ = ContentType.objects.get_or_create(app_label="wagtailcore", model="page")
    editors, _ = Group.objects.get_or_create(name="Editors")
    for codename, name in (
        ("add_page", "Can add page"),
        ("change_page", "Can change page"),
        ("publish_page", "Can publish any page"),
    ):
        permission, _ = Permission.objects.get_or_create(content_type=page_type, codename=codename, defaults={"name": name})
        GroupPagePermission.objects.get_or_create(group=editors, page=home, permission=permission)


class Migration(migrations.Migration):
    dependencies = [
        ("cms", "0003_site_sections"),
        ("wagtailcore", "0098_apitoken"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(editors_publish, migrations.RunPython.noop)]
