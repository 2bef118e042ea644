from django.urls import path

from cms import views

app_name = "cms"

urlpatterns = [
    path("search/", views.search, name="search"),
    path("llms.txt", views.llms_txt, name="llms"),
    path("llms-full.txt", views.llms_full_txt, name="llms-full"),
    path("robots.txt", views.robots_txt, name="robots"),
    path("sitemap.xml", views.sitemap, name="sitemap"),
]
