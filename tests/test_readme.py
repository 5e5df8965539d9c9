"""Every Python code block of the README runs verbatim, on its own, in a fresh interpreter."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine.budget import Budget
from engine.uploads import format_bytes

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_readme_has_code_blocks():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("block", BLOCKS, ids=[block.splitlines()[-1][:40] for block in BLOCKS])
def test_readme_code_block_runs_on_its_own(block, tmp_path):
    result = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]


def test_the_readme_states_the_budgets_defaults_as_the_page_does():
    """One convention for sizes: the README's defaults read as the page's messages print them."""
    budget = Budget()
    stated = (f"({budget.max_workers} workers, {format_bytes(budget.run_bytes)} per run, "
              f"{format_bytes(budget.total_bytes)} in all, {format_bytes(budget.uploads.file_bytes)} uploads")
    assert stated in " ".join(README.read_text(encoding="utf-8").split())
