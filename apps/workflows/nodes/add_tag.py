"""Adds tags to the subscriber (creating them in the project if new)."""

from __future__ import annotations

from apps.workflows.nodes._tagging import TaggingNode
from apps.workflows.nodes.base import register_node


@register_node
class AddTagNode(TaggingNode):
    type = "add_tag"
    label = "Add tag"
    description = "Adds tags to the subscriber, creating them in the project if new."
    starter_config = {"tags": []}
    adds = True
    example_config = {"tags": ["onboarded"]}
