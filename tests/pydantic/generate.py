"""Writes each model of models.py as Pydantic emits it: `Model.model_json_schema()`, unchanged
(no `$schema`), to schemas/<kebab-case name>.schema.json. Run with the Pydantic version of
PYDANTIC_VERSION (see README.md):

    python3 -m venv /tmp/pydantic && /tmp/pydantic/bin/pip install -r requirements.txt
    /tmp/pydantic/bin/python generate.py
"""

import json
import pathlib
import re
import sys

import pydantic

from models import MODELS

HERE = pathlib.Path(__file__).parent
EXPECTED = (HERE / "requirements.txt").read_text().split("==")[1].strip()


def file_name(model: type) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", model.__name__).lower() + ".schema.json"


def main() -> None:
    if pydantic.VERSION != EXPECTED:
        sys.exit(f"pydantic {pydantic.VERSION} is installed; the schemas are {EXPECTED}'s")
    out = HERE / "schemas"
    out.mkdir(exist_ok=True)
    for old in out.glob("*.schema.json"):
        old.unlink()
    for model in MODELS:
        text = json.dumps(model.model_json_schema(), indent=2, ensure_ascii=False)
        (out / file_name(model)).write_text(text + "\n")


if __name__ == "__main__":
    main()
