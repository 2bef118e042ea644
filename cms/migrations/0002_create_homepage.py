from django.db import migrations

INTRO = (
    "<p>Tidings is a multi-tenant notification platform: journeys, transactional publish "
    "and campaigns over email, push, SMS, chat and webhooks.</p>"
)


def create_homepage(apps, schema_editor):
    ContentType = apps.get_model("contenttypes.ContentType")
    Page = apps.get_model("wagtailcore.Page")
    Site = apps.get_model("wagtailcore.Site")
    Locale = apps.get_model("wagtailcore.Locale")
    HomePage = apps.get_model("cms.HomePage")

    # Replace Wagtail's placeholder welcome page with our home page.
    Page.objects.filter(depth=2, slug="home").delete()
    content_type, _ = ContentType.objects.get_or_create(model="homepage", app_label="cms")
    locale = Locale.objects.order_by("pk").first()
    home = HomePage.objects.create(
        title="Tidings",
        draft_title="Tidings",
        slug="home",
        content_type=content_type,
        path="00010001",
        depth=2,
        numchild=0,
        url_path="/home/",
        locale=locale,
        intro=INTRO,
    )
    root = Page.objects.get(depth=1)
    root.numchild = Page.objects.filter(depth=2).count()
    root.save(update_fields=["numchild"])
    Site.objects.filter(is_default_site=True).delete()
    Site.objects.create(hostname="localhost", root_page=home, is_default_site=True, site_name="Tidings")


def remove_homepage(apps, schema_editor):
    apps.get_model("cms.HomePage").objects.filter(slug="home", depth=2).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("cms", "0001_initial"),
        ("wagtailcore", "0098_apitoken"),
    ]

    operations = [migrations.RunPython(create_homepage, remove_homepage)]
