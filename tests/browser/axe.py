"""axe-core accessibility checks in the browser, from the copy .ci/suite installs from npm."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

AXE = Path(__file__).resolve().parents[2] / ".ci" / "node" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = {"serious", "critical"}


def axe_source() -> str:
    if not AXE.is_file():
        pytest.fail(
            f"axe-core is missing at {AXE}: run `npm install --prefix .ci/node --no-save axe-core@4` "
            "(.ci/suite does this before the tests)."
        )
    return AXE.read_text()


def assert_accessible(page: Any) -> None:
    """No serious or critical axe violation on the page as it stands."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_source())
    result = page.evaluate("async () => await window.axe.run(document, {resultTypes: ['violations']})")
    blocking = [v for v in result["violations"] if v.get("impact") in BLOCKING]
    report = "\n".join(
        f"{v['impact']}: {v['id']} ({v['help']}) at {[n['target'] for n in v['nodes']][:5]}" for v in blocking
    )
    assert not blocking, f"axe found on {page.url}:\n{report}"
