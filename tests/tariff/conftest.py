"""A tiny tariff pack and case builder for unit tests (independent of the shipped pack)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from mpcbench_async.tariff import Case, load_pack

GRI = {"rules": [{"id": r, "title": r, "text": f"{r} text. More about {r}."}
                 for r in ("GRI1", "GRI2a", "GRI2b", "GRI3a", "GRI3b", "GRI3c", "GRI4", "GRI5a", "GRI5b", "GRI6")]}
CH64 = {"chapter": "64", "title": "Footwear", "snippets": [
    {"id": "ch64-6404", "heading": "6404",
     "text": "Heading 6404 covers footwear with outer soles of rubber or plastics and uppers of textile materials."},
    {"id": "ch64-6402", "heading": "6402",
     "text": "Heading 6402 covers footwear with outer soles and uppers of rubber or plastics."},
    {"id": "ch64-note-4", "heading": None,
     "text": "The material of the upper is the one with the largest external surface area."}]}
RATES = {"rates": {"6404.11.90": {"general_pct": 20.0, "description": "textile upper sports shoes"},
                   "6404.19.90": {"general_pct": 12.5, "description": "other textile upper footwear"},
                   "6402.99.90": {"general_pct": 6.0, "description": "rubber/plastics uppers"}}}


@pytest.fixture
def pack(tmp_path: Path):
    root = tmp_path / "pack"
    (root / "notes").mkdir(parents=True)
    (root / "gri.json").write_bytes(orjson.dumps(GRI))
    (root / "notes" / "chapter_64.json").write_bytes(orjson.dumps(CH64))
    (root / "duty_rates.json").write_bytes(orjson.dumps(RATES))
    return load_pack(root)


def make_case(**overrides) -> Case:
    import msgspec

    data = {"id": "c1", "pack_id": "tariff", "case_type": "positive", "difficulty": "easy",
            "input": {"input": "Running shoe, polyester mesh upper, rubber outsole.", "options": {"max_iters": 3}},
            "expected": {"preferred_hts": ["6404.11.90"], "allowed_hts": ["6404.19"], "must_not_hts": ["6402.99"],
                         "expected_accept": True}}
    for key, value in overrides.items():
        target, *path = key.split("__")
        node = data
        for part in [target, *path][:-1]:
            node = node.setdefault(part, {})
        node[[target, *path][-1]] = value
    return msgspec.convert(data, Case)
