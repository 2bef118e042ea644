"""The builder draws what the node registry holds, and picks only from the project's own objects."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from apps.delivery.services import connector_create
from apps.workflows.nodes.base import NodeBatch, NodeType, Outcome, node_types
from tests.workflows.builder.conftest import Editor
from tests.workflows.builder.helpers import published_template, segment, tag

pytestmark = pytest.mark.django_db


class ScoreNode(NodeType):
    """A node type the builder has never heard of: it must appear from its declarations alone."""

    type = "score_probe"
    label = "Score probe"
    description = "Sends each subscriber down the lane their engagement score falls in."
    schema = {"type": "object", "additionalProperties": False, "properties": {}}

    def handles(self, config: Mapping[str, Any]) -> list[str]:
        return ["engaged", "dormant"]

    def execute(self, batch: NodeBatch) -> dict[int, Outcome]:
        return {step.id: Outcome.follow("engaged") for step in batch.steps}


@pytest.fixture
def score_node() -> Iterator[NodeType]:
    node_types.add(ScoreNode.type, ScoreNode())
    try:
        yield node_types.get(ScoreNode.type)
    finally:
        node_types.remove(ScoreNode.type)
    assert ScoreNode.type not in node_types


def test_a_newly_registered_node_type_is_in_the_palette_with_its_label_description_and_handles(
    editor: Editor, client: Any, score_node: NodeType
) -> None:
    page = client.get("/console/workflows/welcome/builder/").content.decode()
    palette = page[page.index('data-testid="palette"') :]
    palette = palette[: palette.index("</aside>")]
    assert 'data-type="score_probe"' in palette
    assert "Score probe" in palette
    assert "Sends each subscriber down the lane their engagement score falls in." in palette
    assert "out: engaged, dormant" in palette
    # Added from the palette, it is drawn with a port for each of its handles.
    response = editor.post("add", type="score_probe", after_node="start", after_handle="next")
    assert response.status_code == 200, response.content.decode()[:500]
    assert [n["type"] for n in editor.graph["nodes"]] == ["start", "score_probe"]
    drawn = response.content.decode()
    assert 'data-node="score-probe-1"' in drawn
    for handle in ("engaged", "dormant"):
        assert f'data-port-node="score-probe-1" data-port-handle="{handle}"' in drawn


def test_the_builders_pickers_list_only_this_projects_templates_tags_segments_and_connectors(
    editor: Editor, client: Any, project: Any, other_project: Any
) -> None:
    published_template(project, "ours-welcome", "email")
    published_template(other_project, "theirs-welcome", "email")
    connector_create(project=project, channel="email", provider="dryrun", name="Ours mail")
    connector_create(project=other_project, channel="email", provider="dryrun", name="Theirs mail")
    tag(project, "ours-vip")
    tag(other_project, "theirs-vip")
    segment(project, "Ours gold", ["ours-vip"])
    segment(other_project, "Theirs gold", ["theirs-vip"])
    editor.post("add", type="email", after_node="start", after_handle="next")
    editor.post("add", type="add_tag", after_node="email-1", after_handle="next")
    editor.post("add", type="condition", after_node="add-tag-1", after_handle="next")
    url = "/console/workflows/welcome/builder/form"
    forms = {
        "email-1": client.post(url, {"node": "email-1"}).content.decode(),
        "add-tag-1": client.post(url, {"node": "add-tag-1"}).content.decode(),
        "condition-1": client.post(
            url, {"node": "condition-1", "cfg.predicates.0.op": "in_segment", "_form": "add_row:predicates"}
        ).content.decode(),
    }
    assert "ours-welcome" in forms["email-1"] and "Ours mail" in forms["email-1"]
    assert "ours-vip" in forms["add-tag-1"]
    assert "ours-vip" in forms["condition-1"] and "Ours gold" in forms["condition-1"]
    for node, form in forms.items():
        for theirs in ("theirs-welcome", "Theirs mail", "theirs-vip", "Theirs gold"):
            assert theirs not in form, f"{node}'s form offers another project's {theirs!r}"
