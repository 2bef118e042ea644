"""Node forms generated from each node type's JSON schema, with pickers for the project's own things.

``node_form`` turns a schema and a config into fields to render; ``config_from_post`` reads
the same fields back. Properties the domain knows get their own widget (a template of the
node's channel, a connector, tags, predicates, ordered cases, wait modes); any other
property gets one by its JSON type, so a new node type's form needs no builder change.
A value the form cannot read (letters in a number) is an input error and nothing is
saved; a value that reads but breaks the schema is saved and shown as the node's error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from apps.projects.models import Project
from apps.workflows.nodes.base import NodeType

PREDICATE_OPS = [
    ("has_tag", "has tag"),
    ("lacks_tag", "lacks tag"),
    ("in_segment", "is in segment"),
    ("not_in_segment", "is not in segment"),
]
MATCHES = [("all", "all of these hold"), ("any", "any of these holds"), ("none", "none of these holds")]
MAX_ROWS = 20
MODE_LABELS = {
    "duration": "For a while",
    "time_of_day": "Until a time of day",
    "weekday": "Until a weekday",
    "day_of_month": "Until a day of the month",
    "datetime": "Until a date and time",
}


@dataclass
class FormField:
    name: str  # the POST name: "cfg.template", "cfg.cases.0.handle"
    key: str
    label: str
    widget: str
    value: Any = None
    choices: list[tuple[Any, str]] = field(default_factory=list)
    required: bool = False
    help: str = ""
    errors: list[str] = field(default_factory=list)
    children: list[Any] = field(default_factory=list)

    @property
    def template(self) -> str:
        return f"workflows/builder/widgets/{self.widget}.html"


@dataclass
class Mode:
    value: str
    label: str
    fields: list[FormField]
    selected: bool


@dataclass
class Pickers:
    """The project's templates, connectors, segments and tags, loaded once per form."""

    templates: dict[str, list[tuple[str, str]]]
    connectors: dict[str, list[tuple[int, str]]]
    segments: list[tuple[int, str]]
    tags: list[str]

    @classmethod
    def load(cls, project: Project, schema: Mapping[str, Any]) -> Pickers:
        """Only what this schema's form picks from: a wait's form needs no query at all."""
        from apps.delivery.models import Connector, Template
        from apps.subscribers.models import Segment, Tag

        keys = _property_names(schema)
        templates: dict[str, list[tuple[str, str]]] = {}
        if "template" in keys:
            rows = Template.objects.for_project(project).order_by("key").values_list("key", "name", "channel")
            for key, name, channel in rows:
                templates.setdefault(channel, []).append((key, f"{name} ({key})" if name and name != key else key))
        connectors: dict[str, list[tuple[int, str]]] = {}
        if "connector" in keys:
            found = Connector.objects.for_project(project).order_by("pk")
            for pk, channel, provider, name, default in found.values_list(
                "pk", "channel", "provider", "name", "is_default"
            ):
                text = f"{name or provider} · {provider}" + (" (default)" if default else "")
                connectors.setdefault(channel, []).append((pk, text))
        predicates = bool(keys & {"predicates", "cases"})
        segments = []
        if predicates:
            segments = list(Segment.objects.for_project(project).order_by("name").values_list("pk", "name"))
        tags = []
        if predicates or "tags" in keys:
            tags = list(Tag.objects.for_project(project).order_by("name").values_list("name", flat=True)[:1000])
        return cls(templates, connectors, segments, tags)


def _property_names(schema: Any) -> set[str]:
    names: set[str] = set()
    if isinstance(schema, Mapping):
        for key, value in schema.items():
            if key == "properties" and isinstance(value, Mapping):
                names |= set(value)
            names |= _property_names(value)
    elif isinstance(schema, list):
        for item in schema:
            names |= _property_names(item)
    return names


def _title(key: str) -> str:
    return key.replace("_", " ").capitalize()


def _modes(schema: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """Branches of a ``oneOf`` told apart by a constant ``mode`` (the wait node's kinds)."""
    branches = schema.get("oneOf")
    if not isinstance(branches, list) or not branches:
        return None
    if all(isinstance(b, Mapping) and "const" in b.get("properties", {}).get("mode", {}) for b in branches):
        return branches
    return None


def node_form(
    kind: NodeType, config: Mapping[str, Any], pickers: Pickers, errors: Mapping[str, list[str]] | None = None
) -> list[FormField]:
    errors = errors or {}
    schema = kind.schema
    modes = _modes(schema)
    if modes is not None:
        current = str(config.get("mode") or modes[0]["properties"]["mode"]["const"])
        sections = []
        for branch in modes:
            value = branch["properties"]["mode"]["const"]
            props = {k: v for k, v in branch.get("properties", {}).items() if k != "mode"}
            values = config if value == current else {}
            fields = _fields(kind, props, set(branch.get("required", [])), values, pickers, errors)
            sections.append(Mode(value, MODE_LABELS.get(value, _title(value)), fields, value == current))
        mode = FormField("cfg.mode", "mode", "Wait", "modes", current, errors=list(errors.get("cfg.mode", [])))
        mode.children = sections
        return [mode]
    props = schema.get("properties", {})
    return _fields(kind, props, set(schema.get("required", [])), config, pickers, errors)


def _fields(
    kind: NodeType,
    props: Mapping[str, Any],
    required: set[str],
    config: Mapping[str, Any],
    pickers: Pickers,
    errors: Mapping[str, list[str]],
) -> list[FormField]:
    fields = []
    channel = _channel(kind, config)
    for key, prop in props.items():
        if key == "match" and "predicates" in props:
            continue  # drawn inside the predicate builder
        name = f"cfg.{key}"
        f = FormField(name, key, _title(key), "text", config.get(key), required=key in required)
        f.help = str(prop.get("description", ""))
        f.errors = [
            m for path, messages in errors.items() if path == name or path.startswith(name + ".") for m in messages
        ]
        if key == "template":
            f.widget, f.label = "select", f"{channel.capitalize()} template"
            f.choices = _with_current(pickers.templates.get(channel, []), config.get(key), "not in this project")
        elif key == "connector":
            f.widget, f.label = "select", "Connector"
            options = pickers.connectors.get(channel, [])
            f.choices = [("", "The channel's default connector"), *options]
            current = config.get(key)
            if current not in (None, "") and not any(str(v) == str(current) for v, _ in options):
                f.choices.insert(1, (current, f"{current} — not a {channel} connector here"))
        elif key == "tags":
            f.widget, f.value = "tags", ", ".join(str(t) for t in config.get(key) or [])
            f.choices = [(t, t) for t in pickers.tags]
            f.help = f.help or "Comma-separated tag names."
        elif key == "predicates":
            f.widget, f.label = "predicates", "Conditions"
            f.children = [_predicate_block(name, config, pickers)]
        elif key == "cases":
            f.widget, f.label = "cases", "Cases, checked in order"
            f.children = [
                _case(f"{name}.{i}", case, pickers)
                for i, case in enumerate(config.get(key) or [])
                if isinstance(case, dict)
            ]
        elif "enum" in prop:
            f.widget = "select"
            f.choices = ([] if key in required else [("", "—")]) + [(v, str(v)) for v in prop["enum"]]
        elif prop.get("type") == "integer":
            f.widget = "number"
        elif prop.get("type") == "boolean":
            f.widget = "checkbox"
        elif prop.get("type") == "string" and prop.get("pattern") == "^[0-9]{2}:[0-9]{2}$":
            f.widget, f.help = "time", f.help or "Local time of day (the subscriber's timezone, else the project's)."
        elif prop.get("type") == "string" or not prop.get("type"):
            f.widget = "text"
            if key == "at":
                f.help = f.help or "A date and time such as 2026-12-25T09:00 (local), or with an offset."
        else:
            f.widget, f.value = "json", json.dumps(config[key], indent=2) if key in config else ""
        fields.append(f)
    return fields


def _channel(kind: NodeType, config: Mapping[str, Any]) -> str:
    getter = getattr(kind, "template_channel", None)
    return str(getter(config)) if getter else str(getattr(kind, "channel", ""))


def _with_current(choices: list[tuple[Any, str]], current: Any, missing: str) -> list[tuple[Any, str]]:
    if current in (None, "") or any(str(value) == str(current) for value, _ in choices):
        return ([] if current not in (None, "") else [("", "— choose —")]) + list(choices)
    return [(current, f"{current} — {missing}"), *choices]


def _predicate_block(name: str, holder: Mapping[str, Any], pickers: Pickers) -> dict[str, Any]:
    rows = [p for p in holder.get("predicates") or [] if isinstance(p, dict)]
    return {
        "name": name,
        "match_name": name.rsplit(".", 1)[0] + ".match",
        "match": holder.get("match") or "all",
        "matches": MATCHES,
        "ops": PREDICATE_OPS,
        "rows": [{"name": f"{name}.{i}", **row} for i, row in enumerate(rows)],
        "segments": pickers.segments,
        "tags": pickers.tags,
        "can_add": len(rows) < MAX_ROWS,
    }


def _case(name: str, case: Mapping[str, Any], pickers: Pickers) -> dict[str, Any]:
    return {
        "name": name,
        "handle": case.get("handle", ""),
        "block": _predicate_block(f"{name}.predicates", case, pickers),
    }


class FormInputError(ValueError):
    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(m for ms in errors.values() for m in ms))
        self.errors = errors


def config_from_post(kind: NodeType, post: Mapping[str, Any], *, strict: bool = True) -> dict[str, Any]:
    """The config the form's fields describe. ``strict``: raise ``FormInputError`` for values
    that cannot be read; otherwise skip them (to redraw a form half filled in)."""
    errors: dict[str, list[str]] = {}
    schema = kind.schema
    modes = _modes(schema)
    config: dict[str, Any] = {}
    if modes is not None:
        wanted = str(post.get("cfg.mode", ""))
        branch = next((b for b in modes if b["properties"]["mode"]["const"] == wanted), None)
        if branch is None:
            errors["cfg.mode"] = [f"Choose one of: {', '.join(b['properties']['mode']['const'] for b in modes)}."]
            branch = modes[0]
        config["mode"] = branch["properties"]["mode"]["const"]
        props = {k: v for k, v in branch.get("properties", {}).items() if k != "mode"}
    else:
        props = schema.get("properties", {})
    for key, prop in props.items():
        name = f"cfg.{key}"
        try:
            value = _read(key, prop, name, post)
        except ValueError as exc:
            errors.setdefault(name, []).append(str(exc))
            continue
        if value is not None:
            config[key] = value
    if errors and strict:
        raise FormInputError(errors)
    return config


def _read(key: str, prop: Mapping[str, Any], name: str, post: Mapping[str, Any]) -> Any:
    if key == "match":
        raw = str(post.get(name, "") or "")
        return None if raw in ("", "all") else raw  # "all" is what no match means
    if key == "predicates":
        return _read_predicates(name, post)
    if key == "cases":
        cases = []
        for i in _indexes(post, name):
            prefix = f"{name}.{i}"
            case: dict[str, Any] = {"handle": str(post.get(f"{prefix}.handle", "")).strip()}
            if post.get(f"{prefix}.match") not in (None, "", "all"):
                case["match"] = str(post.get(f"{prefix}.match"))
            case["predicates"] = _read_predicates(f"{prefix}.predicates", post)
            cases.append(case)
        return cases
    raw = post.get(name)
    if prop.get("type") == "boolean":
        return raw in ("on", "true", "1")
    if raw is None:
        return None
    text = str(raw).strip()
    if key == "tags":
        return [t.strip() for t in text.split(",") if t.strip()]
    if text == "":
        return None
    if prop.get("type") == "integer" or (key == "connector"):
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{_title(key)}: enter a whole number.") from None
    if "enum" in prop:
        return next((v for v in prop["enum"] if str(v) == text), text)
    if prop.get("type") in ("object", "array"):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ValueError(f"{_title(key)}: not valid JSON ({exc}).") from None
    return text


def _indexes(post: Mapping[str, Any], prefix: str) -> list[int]:
    found = set()
    for name in post:
        if name.startswith(prefix + "."):
            head = name[len(prefix) + 1 :].split(".", 1)[0]
            if head.isdigit() and int(head) < 100:
                found.add(int(head))
    return sorted(found)


def _read_predicates(name: str, post: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for i in _indexes(post, name):
        prefix = f"{name}.{i}"
        op = str(post.get(f"{prefix}.op", "has_tag"))
        if op in ("in_segment", "not_in_segment"):
            raw = str(post.get(f"{prefix}.segment", "")).strip()
            if raw and not raw.isdigit():
                raise ValueError("Choose a segment from the list.")
            rows.append({"op": op, "segment": int(raw)} if raw else {"op": op})
        else:
            rows.append({"op": op, "tag": str(post.get(f"{prefix}.tag", "")).strip()})
    return rows


def inline_errors(kind: NodeType, config: Mapping[str, Any]) -> dict[str, list[str]]:
    """Schema errors keyed by the field they belong to ("cfg.predicates.0.tag"); "" for the form."""
    schema = kind.schema
    modes = _modes(schema)
    if modes is not None:
        branch = next((b for b in modes if b["properties"]["mode"]["const"] == config.get("mode")), None)
        if branch is None:
            return {"cfg.mode": ["Choose how long to wait."]}
        schema = {"type": "object", **branch}
    found: dict[str, list[str]] = {}
    for error in jsonschema.Draft202012Validator(schema).iter_errors(config):
        path = [str(p) for p in error.absolute_path]
        if error.validator == "required":
            missing = error.message.split("'")[1] if "'" in error.message else ""
            path, message = [*path, missing], "Required."
        elif error.validator == "oneOf" and path and path[-2:-1] and path[-2] == "predicates":
            message = "Fill in this condition."
        else:
            message = error.message
        found.setdefault("cfg." + ".".join(path) if path else "", []).append(message)
    if not found:
        for issue in kind.semantic_issues("node", config):
            found.setdefault("", []).append(issue.message.split(": ", 1)[-1])
    return found
