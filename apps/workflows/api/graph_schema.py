"""The workflow graph in the OpenAPI document, generated from the node registry.

A node is a ``oneOf`` over every registered node type, told apart by its ``type``, and
each variant's ``config`` is that type's own config schema: a new node module appears
in the published contract without touching this file. Node schemas are JSON Schema
2020-12 (what ``jsonschema`` checks on publish); the document is OpenAPI 3.0, so the
few keywords that differ are translated and any other one fails generation loudly.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from drf_spectacular.drainage import warn
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.workflows.graph import GRAPH_SCHEMA
from apps.workflows.nodes.base import NodeType, node_types, schema_validator

GRAPH = "WorkflowGraph"
DRAFT_GRAPH = "WorkflowDraftGraph"
NODE = "WorkflowNode"
DRAFT_NODE = "WorkflowDraftNode"
EDGE = "WorkflowEdge"

# start -> condition -> email (yes) / push (no) -> join -> wait -> end: every rule of
# publishing holds for it (tests/test_openapi.py checks it against graph validation).
GRAPH_EXAMPLE: dict[str, Any] = {
    "nodes": [
        {"id": "start", "type": "start"},
        {
            "id": "is-vip",
            "type": "condition",
            "label": "VIP?",
            "config": {"predicates": [{"op": "has_tag", "tag": "vip"}]},
        },
        {"id": "vip-email", "type": "email", "config": {"template": "vip-welcome"}},
        {"id": "welcome-push", "type": "push", "config": {"template": "welcome-push", "lane": "normal"}},
        {"id": "together", "type": "join"},
        {"id": "two-days", "type": "wait", "config": {"mode": "duration", "days": 2}},
        {"id": "done", "type": "end"},
    ],
    "edges": [
        {"from": "start", "to": "is-vip"},
        {"from": "is-vip", "handle": "yes", "to": "vip-email"},
        {"from": "is-vip", "handle": "no", "to": "welcome-push"},
        {"from": "vip-email", "to": "together"},
        {"from": "welcome-push", "to": "together"},
        {"from": "together", "to": "two-days"},
        {"from": "two-days", "to": "done"},
    ],
}

# JSON Schema keywords that mean the same in an OpenAPI 3.0 schema object.
_SAME = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "oneOf",
        "anyOf",
        "allOf",
        "not",
        "enum",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "uniqueItems",
        "description",
        "title",
        "default",
        "format",
    }
)
_SCHEMA_MAPS = frozenset({"properties"})
_SCHEMA_LISTS = frozenset({"oneOf", "anyOf", "allOf"})
_SCHEMA_VALUES = frozenset({"items", "not", "additionalProperties"})


class UntranslatableSchema(ValueError):
    pass


def openapi_schema(schema: Any, where: str = "config") -> Any:
    """``schema`` (JSON Schema 2020-12) as an OpenAPI 3.0 schema object."""
    if isinstance(schema, bool):
        return schema
    out: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword == "const":
            out["enum"] = [value]
        elif keyword not in _SAME:
            raise UntranslatableSchema(f"{where}: JSON Schema keyword {keyword!r} has no OpenAPI 3.0 translation")
        elif keyword == "type" and not isinstance(value, str):
            raise UntranslatableSchema(f"{where}: a list of types has no OpenAPI 3.0 translation")
        elif keyword in _SCHEMA_MAPS:
            out[keyword] = {name: openapi_schema(sub, f"{where}/{name}") for name, sub in value.items()}
        elif keyword in _SCHEMA_LISTS:
            out[keyword] = [openapi_schema(sub, f"{where}/{keyword}/{i}") for i, sub in enumerate(value)]
        elif keyword in _SCHEMA_VALUES:
            out[keyword] = openapi_schema(value, f"{where}/{keyword}")
        else:
            out[keyword] = deepcopy(value)
    return out


def component_stem(type_name: str) -> str:
    return "".join(part.capitalize() for part in type_name.split("_"))


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _node_properties() -> dict[str, Any]:
    """The keys every node has besides ``type`` and ``config``, as the graph format says."""
    shape = GRAPH_SCHEMA["properties"]["nodes"]["items"]["properties"]
    notes = {
        "id": "Unique within the graph; edges name nodes by it.",
        "label": "Shown in the builder; ignored by the engine.",
        "position": "Where the builder draws the node; ignored by the engine.",
        "flags": "What the builder could not carry over (a pasted node naming a template or segment this "
        "project lacks); publishing is refused while any is left.",
    }
    return {name: openapi_schema(shape[name], f"node/{name}") | {"description": note} for name, note in notes.items()}


def _node_variant(kind: NodeType) -> dict[str, Any]:
    config_needed = not schema_validator(kind.schema).is_valid({})
    return {
        "type": "object",
        "additionalProperties": False,
        "description": kind.description,
        "required": ["id", "type", *(["config"] if config_needed else [])],
        "properties": {
            **_node_properties(),
            "type": {"type": "string", "enum": [kind.type]},
            "config": _ref(f"{component_stem(kind.type)}NodeConfig"),
        },
    }


def _edge() -> dict[str, Any]:
    schema = openapi_schema(GRAPH_SCHEMA["properties"]["edges"]["items"], "edge")
    schema["description"] = "A way from one node to the next."
    schema["properties"]["from"]["description"] = "The id of the node left."
    schema["properties"]["to"]["description"] = "The id of the node entered."
    schema["properties"]["handle"]["description"] = (
        "Which way out of the `from` node (`next` when omitted): a condition leaves by `yes` or `no`, a "
        "multi-condition by each case's handle or `default`. Every handle of a node needs an edge on "
        "publish, and one handle may lead to several nodes (parallel branches, merged by a join)."
    )
    return schema


def _graph(nodes: dict[str, Any], description: str) -> dict[str, Any]:
    shape = GRAPH_SCHEMA["properties"]
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["nodes", "edges"],
        "description": description,
        "properties": {
            "nodes": {"type": "array", "maxItems": shape["nodes"]["maxItems"], "items": nodes},
            "edges": {"type": "array", "maxItems": shape["edges"]["maxItems"], "items": _ref(EDGE)},
        },
    }


def graph_components() -> dict[str, dict[str, Any]]:
    """Every schema component the graph format needs, by name."""
    kinds = [kind for _, kind in node_types.items()]
    components: dict[str, dict[str, Any]] = {}
    for kind in kinds:
        stem = component_stem(kind.type)
        config = openapi_schema(kind.schema, f"{kind.type} config")
        components[f"{stem}NodeConfig"] = {"description": f"The config of a {kind.type} node.", **config}
        components[f"{stem}Node"] = _node_variant(kind)
    components[NODE] = {
        "description": "One node of a journey; `type` says which, and `config` follows that type's schema.",
        "oneOf": [_ref(f"{component_stem(kind.type)}Node") for kind in kinds],
        "discriminator": {
            "propertyName": "type",
            "mapping": {kind.type: f"#/components/schemas/{component_stem(kind.type)}Node" for kind in kinds},
        },
    }
    components[EDGE] = _edge()
    components[GRAPH] = _graph(
        _ref(NODE),
        "A journey: nodes and the edges between them, starting at the one start node. This is what "
        "publishing accepts; a saved draft is checked only for its shape, so it may still be unfinished.",
    ) | {"example": deepcopy(GRAPH_EXAMPLE)}
    draft_node = openapi_schema(GRAPH_SCHEMA["properties"]["nodes"]["items"], "draft node")
    draft_node["description"] = (
        "A node as a draft holds it: `type` and `config` are checked only on publish (see WorkflowNode)."
    )
    components[DRAFT_NODE] = draft_node
    components[DRAFT_GRAPH] = _graph(
        _ref(DRAFT_NODE),
        "A draft as saved: its shape is sound, but nodes may be unfinished until it is published "
        "(`draft_issues` lists what publishing would refuse).",
    )
    return components


@extend_schema_field(_ref(GRAPH))
class WorkflowGraphField(serializers.JSONField):
    """A graph in the format publishing accepts (WorkflowGraph in the OpenAPI document)."""


@extend_schema_field(_ref(DRAFT_GRAPH))
class WorkflowDraftGraphField(serializers.JSONField):
    """A graph as a draft may hold it (WorkflowDraftGraph in the OpenAPI document)."""


def graph_components_hook(result: dict[str, Any], **_: Any) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: add the graph components to the document.

    It runs after drf-spectacular's enum hook on purpose: that hook names enums by
    component and property, so the wait config's five single-value ``mode`` enums would
    all become one component (the first one's value), refusing four of the five modes."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for name, schema in graph_components().items():
        if name in schemas:
            warn(f"the workflow graph component {name} collides with a component of the same name")
            continue
        schemas[name] = schema
    result["components"]["schemas"] = dict(sorted(schemas.items()))
    return result
