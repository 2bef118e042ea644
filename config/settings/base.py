"""Settings shared by every environment. Values come from ``config.env``."""

from __future__ import annotations

from datetime import timedelta

import dj_database_url

from config import embedded
from config.env import (
    BASE_DIR,
    data_dir,
    env_bool,
    env_int,
    env_json,
    env_list,
    env_str,
)

DATA_DIR = data_dir()

SECRET_KEY = env_str("DJANGO_SECRET_KEY", "insecure-local-key-change-me-in-production-0123456789")
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.sitemaps",
    "django.contrib.humanize",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "guardian",
    "anymail",
    "storages",
    # Wagtail (cms/ only)
    "wagtail.contrib.forms",
    "wagtail.contrib.routable_page",
    "wagtail.contrib.sitemaps",
    "wagtail.contrib.redirects",
    "wagtail.embeds",
    "wagtail.sites",
    "wagtail.users",
    "wagtail.snippets",
    "wagtail.documents",
    "wagtail.images",
    "wagtail.search",
    "wagtail.admin",
    "wagtail",
    "modelcluster",
    "taggit",
    "django_htmx",
    "axes",
    "allauth",
    "allauth.account",
    "allauth.mfa",
    "allauth.usersessions",
    # Tidings
    "apps.core",
    "apps.projects",
    "apps.governance",
    "apps.subscribers",
    "apps.delivery",
    "apps.notifications",
    "apps.workflows",
    "apps.campaigns",
    "apps.accounts",
    "apps.console",
    "cms",
]

MIDDLEWARE = [
    "apps.core.limits.BodySizeLimitMiddleware",
    "apps.core.problems.ApiProblemMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "apps.core.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # After authentication and messages: the console opens only to a verified address and,
    # where the organization requires it, a second factor (apps.accounts.gate).
    "apps.accounts.gate.ConsoleGateMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "apps.core.idempotency.IdempotencyMiddleware",
    "wagtail.contrib.redirects.middleware.RedirectMiddleware",
    # Last, where django-axes wants its middleware: turns a sign-in refused by the lock into
    # its answer. It replaces axes' own, which fails under ASGI (apps.accounts.signin).
    "apps.accounts.signin.SignInLockMiddleware",
]
# /api/v1/ under the API process (config.api_wsgi): what its answers rely on, nothing else.
# Keys, not sessions or CSRF tokens, authenticate; no static files or CMS redirects live there.
TIDINGS_API_MIDDLEWARE = [
    "apps.core.limits.BodySizeLimitMiddleware",
    "apps.core.problems.ApiProblemMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "apps.core.csp.ContentSecurityPolicyMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "apps.core.idempotency.IdempotencyMiddleware",
]

# Content-Security-Policy by path prefix, first match wins (apps.core.csp). The console
# and the API docs run only their own static scripts: no inline script, no eval. Inline
# styles stay allowed: the HTML previews of emails (sandboxed srcdoc frames, which take
# their page's policy) are styled inline, and a style cannot run code. API answers are
# data and may load nothing.
_CSP_PAGES = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: https:; "
    "font-src 'self' data:; connect-src 'self'; frame-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)
TIDINGS_CONTENT_SECURITY_POLICY = {
    "/api/docs/": _CSP_PAGES,
    "/api/": "default-src 'none'; frame-ancestors 'none'",
    "/console/": _CSP_PAGES,
}

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "apps.console.context.console_context",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------
# Always PostgreSQL. No DATABASE_URL: the embedded server that `make run` starts (config.embedded).
TIDINGS_EMBEDDED_POSTGRES = not env_str("DATABASE_URL")
DATABASE_URL = env_str("DATABASE_URL") or embedded.database_url()
DATABASES = {
    "default": dj_database_url.parse(
        # 0 by default: under ASGI each request runs in its own thread, and a kept-open
        # connection per finished thread would pile up until Postgres refuses more.
        DATABASE_URL,
        conn_max_age=env_int("DB_CONN_MAX_AGE", 0),
        # A SELECT 1 before each request's first query. The API process (config.api_wsgi)
        # turns it off and drops a connection the server hung up on without a round trip.
        conn_health_checks=env_bool("DB_CONN_HEALTH_CHECKS", True),
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Hot hand-written statements (the publish path's) are prepared once per connection
# (apps.core.dbcompat.prepared_cursor). 0 behind a transaction-pooling proxy that cannot
# keep prepared statements (PgBouncer before 1.21, or without max_prepared_statements).
TIDINGS_DB_PREPARED_STATEMENTS = env_bool("DB_PREPARED_STATEMENTS", True)

# --- Redis: cache, rate limits, shared counters and (by default) the Celery broker ------
# No REDIS_URL: the embedded server that `make run` starts (config.embedded).
TIDINGS_EMBEDDED_REDIS = not env_str("REDIS_URL")
REDIS_URL = env_str("REDIS_URL") or embedded.redis_url()
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", "tidings"),
    }
}

# --- Celery ---------------------------------------------------------------------------
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or REDIS_URL
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_ALWAYS_EAGER = False

# Control loops and housekeeping; beat is their only home. Apps add their own entries.
CELERY_BEAT_SCHEDULE = {
    "core-heartbeat": {"task": "core.heartbeat", "schedule": 15.0},
    "core-idempotency-sweep": {"task": "core.idempotency_sweep", "schedule": 600.0},
}

# --- Auth, i18n, static ---------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    # First: refuses any password, right or wrong, while the account or the client is locked.
    "axes.backends.AxesStandaloneBackend",
    # Django admin and the CMS sign in by username; the console signs in by email (allauth).
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
    "guardian.backends.ObjectPermissionBackend",
]
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "console:home"
LOGOUT_REDIRECT_URL = "account_login"

# --- Accounts (django-allauth: account, mfa, usersessions; pages under /console/) ------
ACCOUNT_ADAPTER = "apps.accounts.adapter.AccountAdapter"
ACCOUNT_FORMS = {"login": "apps.accounts.forms.SignInForm", "signup": "apps.accounts.forms.SignUpForm"}
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_EMAIL_VERIFICATION = "mandatory"
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
ACCOUNT_CHANGE_EMAIL = True
ACCOUNT_EMAIL_NOTIFICATIONS = True
ACCOUNT_LOGOUT_ON_PASSWORD_CHANGE = False
ACCOUNT_EMAIL_SUBJECT_PREFIX = ""
ACCOUNT_DEFAULT_HTTP_PROTOCOL = env_str("TIDINGS_PUBLIC_SCHEME", "http")
ACCOUNT_SESSION_REMEMBER = None
# django-axes owns sign-in throttling (below), with its per-account and per-client lock
# and its message; allauth's own login limits would answer first with a page of their own.
# Its other limits (sign-up, password reset, email confirmation) stay.
ACCOUNT_RATE_LIMITS = {"login": False, "login_failed": False}
MFA_ADAPTER = "apps.accounts.adapter.MfaAdapter"
MFA_SUPPORTED_TYPES = ["totp", "recovery_codes", "webauthn"]
MFA_TOTP_ISSUER = "Tidings"
MFA_PASSKEY_LOGIN_ENABLED = False
# Browsers allow WebAuthn on http://localhost only; `make run` serves plain http.
MFA_WEBAUTHN_ALLOW_INSECURE_ORIGIN = DEBUG
USERSESSIONS_TRACK_ACTIVITY = False
# The console's "Sent mail" page (recent account email, links clickable): platform staff
# only, unless this is on (DEBUG, and `make run` through config.settings.local).
TIDINGS_SENT_MAIL_PUBLIC = env_bool("TIDINGS_SENT_MAIL_PUBLIC", DEBUG)

# --- Sign-in throttling (django-axes): console, Django admin and CMS sign-in pages ------
# API keys never go through authenticate(), so the API is not affected.
# Failures are counted per account (from any client) and per client (for any account);
# reaching the limit on either locks it for the cool-off, and every attempt made during a
# lock, even with the right password, starts the cool-off again.
# Quiet: axes would print its version on every start, a second line under one-line errors.
AXES_VERBOSE = False
AXES_FAILURE_LIMIT = env_int("TIDINGS_SIGNIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("TIDINGS_SIGNIN_LOCK_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = True
# A success leaves earlier failures counted: otherwise a client could clear its own
# per-client count by signing in to an account of its own between guesses.
AXES_RESET_ON_SUCCESS = False
# The sign-in forms show the lock as a form error and SignInLockMiddleware answers with
# that page and a 429 (apps.accounts.signin); axes' own middleware is not installed.
SILENCED_SYSTEM_CHECKS = ["axes.W002"]
AXES_CLIENT_IP_CALLABLE = "apps.core.clients.client_ip_address"
# One account, one count: the console signs in by email, the admin and CMS by username.
AXES_USERNAME_CALLABLE = "apps.accounts.throttle.sign_in_account"
# Behind N reverse proxies the client is the Nth address from the right of
# X-Forwarded-For (each proxy appends the address it saw); 0: REMOTE_ADDR.
TIDINGS_TRUSTED_PROXY_COUNT = env_int("TIDINGS_TRUSTED_PROXY_COUNT", 0)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
MEDIA_URL = "/media/"
MEDIA_ROOT = DATA_DIR / "media"
STORAGES = {
    "default": {"BACKEND": env_str("TIDINGS_FILE_STORAGE", "django.core.files.storage.FileSystemStorage")},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
# Files served at the site root (/favicon.ico).
WHITENOISE_ROOT = BASE_DIR / "static" / "root"
TIDINGS_SERVE_MEDIA = False

# --- API ------------------------------------------------------------------------------
REST_FRAMEWORK = {
    # Tidings' API views get key authentication, scopes and throttling from
    # ProjectAPIView; these defaults only cover third-party DRF views (Wagtail admin).
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.SessionAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "apps.governance.schema.ProjectAPISchema",
    "EXCEPTION_HANDLER": "apps.core.problems.problem_exception_handler",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Tidings API",
    "DESCRIPTION": "Multi-tenant notification platform: subscribers, publish, journeys, campaigns.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "APPEND_COMPONENTS": {
        "securitySchemes": {
            "ApiKey": {
                "type": "http",
                "scheme": "bearer",
                "description": (
                    "A project API key: pk_ (public), sk_ (secret) or rk_ (restricted), sent as "
                    "`Authorization: Bearer <key>`. The scheme is case-insensitive (`bearer` works) and "
                    "spaces around the key are ignored."
                ),
            }
        }
    },
    "SECURITY": [{"ApiKey": []}],
    "PREPROCESSING_HOOKS": ["apps.governance.schema.only_public_api"],
    # The workflow graph's components come from the node registry (apps.workflows.api.graph_schema).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "apps.workflows.api.graph_schema.graph_components_hook",
    ],
    "SERVE_AUTHENTICATION": [],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Shared choice sets get one stable component name wherever a field uses them.
    "ENUM_NAME_OVERRIDES": {
        "ChannelEnum": "apps.subscribers.models.Channel",
        "DevicePlatformEnum": "apps.subscribers.models.Device.Platform",
        "ImportJobStatusEnum": "apps.subscribers.models.ImportJob.Status",
        "ImportJobFormatEnum": "apps.subscribers.models.ImportJob.Format",
        "TagEventActionEnum": "apps.subscribers.models.TagEvent.Action",
        "TagEventSourceEnum": "apps.subscribers.models.TagEvent.Source",
    },
}

# Request bodies: one limit for ordinary API calls; uploads declare their own.
TIDINGS_API_MAX_BODY_BYTES = env_int("TIDINGS_API_MAX_BODY_BYTES", 1024 * 1024)
TIDINGS_UPLOAD_MAX_BODY_BYTES = env_int("TIDINGS_UPLOAD_MAX_BODY_BYTES", 512 * 1024 * 1024)
TIDINGS_UPLOAD_PATHS = ["/api/v1/subscribers/import"]
# How deeply a JSON body may nest objects and arrays (the body itself is level 1).
TIDINGS_API_MAX_JSON_DEPTH = env_int("TIDINGS_API_MAX_JSON_DEPTH", 32)
DATA_UPLOAD_MAX_MEMORY_SIZE = TIDINGS_API_MAX_BODY_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# Per-key request budget (requests per minute) unless a key carries its own.
TIDINGS_API_KEY_RATE_PER_MINUTE = env_int("TIDINGS_API_KEY_RATE_PER_MINUTE", 12000)
# How long a web process keeps a resolved API key; a revocation made in another process
# takes effect within this (keys rotated with a grace period are never cached). 0: off.
TIDINGS_API_KEY_CACHE_SECONDS = env_int("TIDINGS_API_KEY_CACHE_SECONDS", 5)
TIDINGS_IDEMPOTENCY_TTL_HOURS = 24

# Secrets at rest: comma-separated Fernet keys, newest first (rotation = prepend a key).
TIDINGS_SECRET_KEYS = env_list("TIDINGS_SECRET_KEYS", [])

# --- Wagtail --------------------------------------------------------------------------
WAGTAIL_SITE_NAME = "Tidings"
WAGTAILADMIN_BASE_URL = env_str("TIDINGS_BASE_URL", "http://127.0.0.1:8000")
WAGTAILADMIN_USER_LOGIN_FORM = "apps.accounts.signin.CmsSignInForm"
WAGTAILDOCS_EXTENSIONS = ["csv", "docx", "key", "odt", "pdf", "pptx", "rtf", "txt", "xlsx", "zip"]
# Wagtail's database backend: on PostgreSQL it is the built-in full-text search (tsvector,
# ranked), so docs and blog search needs no search server of its own.
WAGTAILSEARCH_BACKENDS = {"default": {"BACKEND": "wagtail.search.backends.database"}}
# Scheduled publishing: beat runs Wagtail's publish_scheduled once a minute (cms.tasks).
CELERY_BEAT_SCHEDULE["cms-publish-scheduled"] = {"task": "cms.publish_scheduled", "schedule": 60.0}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
TIDINGS_IDEMPOTENCY_OWNER_RESOLVER = "apps.governance.api.base.idempotency_owner"
# Every queue a worker listens on. Delivery lanes have their own queues so a slow bulk
# run never delays a one-time code.
TIDINGS_WORKER_QUEUES = ["default", "high", "normal", "bulk", "journeys", "campaigns"]
STATIC_ROOT.mkdir(parents=True, exist_ok=True)

# Under ASGI every request runs in a thread of its own, so persistent connections pile up
# (one per dead thread) until Postgres refuses more. DB_POOL=1 gives the process a psycopg
# pool instead (Django requires CONN_MAX_AGE=0 with it); recommended for web processes.
if env_bool("DB_POOL", False):
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = False
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": env_int("DB_POOL_MIN", 2),
        "max_size": env_int("DB_POOL_MAX", 8),
        "timeout": 10,
    }

# --- Subscribers ----------------------------------------------------------------------
CELERY_BEAT_SCHEDULE["subscribers-imports-sweep"] = {"task": "subscribers.imports_sweep", "schedule": 60.0}

# --- Delivery dispatcher --------------------------------------------------------------
TIDINGS_DISPATCH_BATCH_SIZE = env_int("TIDINGS_DISPATCH_BATCH_SIZE", 500)
# Limits of one message's render (previews and sends alike): past either, that message fails.
TIDINGS_RENDER_TIME_LIMIT_MS = env_int("TIDINGS_RENDER_TIME_LIMIT_MS", 1000)
TIDINGS_RENDER_MAX_CHARS = env_int("TIDINGS_RENDER_MAX_CHARS", 1_000_000)
# The bulk lane claims bigger batches: per-batch costs (claim, screening queries, rate
# reservation, the recording transaction) spread over more messages, and a campaign
# batch of 2,000 still finishes in well under a second. 0: the same as the other lanes.
TIDINGS_DISPATCH_BULK_BATCH_SIZE = env_int("TIDINGS_DISPATCH_BULK_BATCH_SIZE", 2000)
# A claim older than this is presumed lost (worker died) and is retried by the sweeper;
# it must comfortably exceed the slowest provider call of a batch.
TIDINGS_DISPATCH_CLAIM_TTL_SECONDS = env_int("TIDINGS_DISPATCH_CLAIM_TTL_SECONDS", 120)
TIDINGS_DISPATCH_RUN_SECONDS = env_int("TIDINGS_DISPATCH_RUN_SECONDS", 20)
TIDINGS_DELIVERY_ATTEMPT_BUDGET = env_int("TIDINGS_DELIVERY_ATTEMPT_BUDGET", 5)
# A row whose batch was claimed this many times without finishing (its worker crashed or
# was killed each time) is taken out and dead-lettered as "poison", in every batch engine.
TIDINGS_POISON_AFTER_CRASHES = env_int("TIDINGS_POISON_AFTER_CRASHES", 3)
TIDINGS_RETRY_POLICY = {
    "default": {
        "base_seconds": env_int("TIDINGS_RETRY_BASE_MS", 5000) / 1000,
        "cap_seconds": env_int("TIDINGS_RETRY_CAP_SECONDS", 3600),
    },
}
TIDINGS_CONNECTOR_FAILURE_THRESHOLD = env_int("TIDINGS_CONNECTOR_FAILURE_THRESHOLD", 50)
TIDINGS_DRYRUN_DEFAULTS: dict = {}
CELERY_BEAT_SCHEDULE["delivery-sweep"] = {"task": "delivery.sweep", "schedule": 5.0}
# What each sent message said (journey paths show it) is kept this long, then pruned.
TIDINGS_SENT_CONTENT_RETENTION_DAYS = env_int("TIDINGS_SENT_CONTENT_RETENTION_DAYS", 30)
CELERY_BEAT_SCHEDULE["delivery-sent-content-prune"] = {"task": "delivery.sent_content_prune", "schedule": 600.0}

# --- Real provider channels -----------------------------------------------------------
# Public base URL providers call back (Twilio status callbacks); empty: not sent.
TIDINGS_PUBLIC_URL = env_str("TIDINGS_PUBLIC_URL", "")
# Outgoing and chat webhooks refuse private / loopback / link-local targets unless set.
TIDINGS_WEBHOOK_ALLOW_PRIVATE = env_bool("TIDINGS_WEBHOOK_ALLOW_PRIVATE", False)

# --- Notifications (publish API) ------------------------------------------------------
# How long "template key" (latest version) stays cached per process; "key@N" is immutable.
TIDINGS_TEMPLATE_CACHE_SECONDS = env_int("TIDINGS_TEMPLATE_CACHE_SECONDS", 5)
# Benchmark-only URL (a bare DRF two-row insert) used by `manage.py bench_publish`.
TIDINGS_BENCH_ENDPOINTS = env_bool("TIDINGS_BENCH_ENDPOINTS", False)
# Per process, at most one relay wake-up write per project and lane in this many ms; a
# commit inside the window is woken at its end (apps.notifications.wakeups). For the API
# process under load (one Redis round trip per publish otherwise); 0: every commit writes.
TIDINGS_RELAY_WAKE_COALESCE_MS = env_int("TIDINGS_RELAY_WAKE_COALESCE_MS", 0)
CELERY_BEAT_SCHEDULE["notifications-relay-sweep"] = {"task": "notifications.relay_sweep", "schedule": 15.0}
CELERY_BEAT_SCHEDULE["notifications-broadcast-sweep"] = {"task": "notifications.broadcast_sweep", "schedule": 60.0}

# --- Workflows (journeys) -------------------------------------------------------------
CELERY_BEAT_SCHEDULE["workflows-sweep"] = {
    "task": "workflows.sweep",
    "schedule": 60.0,
    "options": {"queue": "journeys"},
}
# Steps one runner task claims and runs in one transaction. Per-batch costs (claim, the
# set-based writes, roll-ups) dominate below ~2,000; 100k journeys ran in 54-58 s at 2,000
# against 59-65 s at 1,000 on 2 cores, while a batch still commits in about a second.
WORKFLOWS_BATCH_SIZE = env_int("WORKFLOWS_BATCH_SIZE", 2000)
WORKFLOWS_RUNNERS = env_int("WORKFLOWS_RUNNERS", 2)
WORKFLOWS_CLAIM_SECONDS = env_int("WORKFLOWS_CLAIM_SECONDS", 300)
WORKFLOWS_SEND_RECHECK_SECONDS = env_int("WORKFLOWS_SEND_RECHECK_SECONDS", 60)

# --- Campaigns: control loops (beat only): AIMD + breaker + samples, reaper, reconciler --
CELERY_BEAT_SCHEDULE |= {
    "campaigns-control": {"task": "campaigns.control_tick", "schedule": 2.0},
    "campaigns-reaper": {"task": "campaigns.reaper", "schedule": 15.0},
    "campaigns-reconciler": {"task": "campaigns.reconciler", "schedule": 20.0},
    "campaigns-start-due": {"task": "campaigns.start_due", "schedule": 10.0},
}

# --- Account email: through the platform's own project (apps.accounts.platform) ------
TIDINGS_PLATFORM_ORGANIZATION_SLUG = env_str("TIDINGS_PLATFORM_ORGANIZATION_SLUG", "tidings-platform")
# The dry run by default, so `make run` needs no mail server; name a real email provider
# (smtp, ses, resend, postmark…) with its credentials and settings as JSON objects.
TIDINGS_ACCOUNT_MAIL_PROVIDER = env_str("TIDINGS_ACCOUNT_MAIL_PROVIDER", "dryrun")
TIDINGS_ACCOUNT_MAIL_CREDENTIALS = env_json("TIDINGS_ACCOUNT_MAIL_CREDENTIALS", {"api_key": "dryrun"})
TIDINGS_ACCOUNT_MAIL_SETTINGS = env_json("TIDINGS_ACCOUNT_MAIL_SETTINGS", {})
TIDINGS_ACCOUNT_MAIL_FROM = env_str("TIDINGS_ACCOUNT_MAIL_FROM", "Tidings <accounts@tidings.test>")
