"""Removes tags from the subscriber."""

from __future__ import annotations

from apps.workflows.nodes._tagging import TaggingNode
from apps.workflows.nodes.base import register_node


@register_node
class RemoveTagNode(TaggingNode):
    type = "remove_tag"
    label = "Remove tag"
    description = "Removes tags from the subscriber."
    starter_config = {"tags": []}
    adds = False
    example_config = {"tags": ["trial"]}
